/* hymt-chat's support desk widget: <script src="https://chat.example/desk/widget.js" async></script>
   A "Chat with us" button that opens the app's own /desk page in a frame. It loads nothing else,
   writes no inline <script> or <style> (styles are set through the CSSOM, which a strict CSP
   allows): the host page only needs script-src and frame-src for the app's origin. */
(function () {
  "use strict";
  var me = document.currentScript, label = {label}, close = "×";
  if (!me || !me.src) return;
  var origin = new URL(me.src).origin, open = false, frame = null;
  function css(el, rules) { for (var k in rules) el.style.setProperty(k, rules[k]); return el; }
  function add() {
    var button = css(document.createElement("button"), {
      "position": "fixed", "right": "1rem", "bottom": "1rem", "z-index": "2147483647",
      "padding": ".7rem 1.1rem", "border": "0", "border-radius": "1.5rem",
      "background": "#2f5dff", "color": "#fff", "font": "600 1rem system-ui, sans-serif",
      "box-shadow": "0 2px 10px #0004", "cursor": "pointer"});
    button.type = "button"; button.id = "hymt-desk-button"; button.textContent = label;
    button.setAttribute("aria-expanded", "false");
    button.addEventListener("click", function () {
      open = !open;
      if (open && !frame) {
        frame = css(document.createElement("iframe"), {
          "position": "fixed", "right": "1rem", "bottom": "4.5rem", "z-index": "2147483647",
          "width": "min(24rem, calc(100vw - 2rem))", "height": "min(36rem, calc(100vh - 6rem))",
          "border": "1px solid #8886", "border-radius": ".8rem", "background": "#fff",
          "box-shadow": "0 4px 24px #0005"});
        frame.id = "hymt-desk-frame"; frame.title = label;
        frame.src = origin + "/desk";
        document.body.appendChild(frame);
      }
      if (frame) frame.style.setProperty("display", open ? "block" : "none");
      button.textContent = open ? close : label;
      button.setAttribute("aria-expanded", open ? "true" : "false");
    });
    document.body.appendChild(button);
  }
  if (document.body) add(); else document.addEventListener("DOMContentLoaded", add);
})();
