/* hymt-chat's support desk widget: <script src="https://chat.example/desk/widget.js" async></script>
   A "Chat with us" button that opens the app's own /desk page in a frame. It loads nothing else,
   writes no inline <script> or <style> (styles are set through the CSSOM, which a strict CSP
   allows): the host page only needs script-src and frame-src for the app's origin. The frame may
   use the microphone (the desk's mic button); a host page whose Permissions-Policy forbids it
   keeps typing only.
   On a phone (a window up to 640 px wide) the desk opens as a sheet over the whole page, the
   close button above it; wider, as a panel over the page's corner, above the button. */
(function () {
  "use strict";
  var me = document.currentScript, label = {label}, close = "×";
  if (!me || !me.src) return;
  var origin = new URL(me.src).origin, open = false, frame = null, button = null;
  var phone = window.matchMedia ? window.matchMedia("(max-width: 640px)") : null;
  function css(el, rules) { for (var k in rules) el.style.setProperty(k, rules[k]); return el; }
  function place() {  // where the button and the frame go, for this window's width
    var sheet = !!(phone && phone.matches);
    if (button) {
      css(button, open && sheet ? {
        "top": "max(.375rem, env(safe-area-inset-top))", "bottom": "auto", "right": ".5rem",
        "width": "44px", "height": "44px", "padding": "0", "font-size": "1.5rem"
      } : {
        "top": "auto", "bottom": "max(1rem, env(safe-area-inset-bottom))", "right": "1rem",
        "width": "auto", "height": "auto", "padding": ".75rem 1.25rem", "font-size": "1rem"
      });
    }
    if (frame) {
      css(frame, sheet ? {
        "top": "3.5rem", "bottom": "auto", "left": "0", "right": "0", "width": "100%",
        "height": "calc(100% - 3.5rem)", "border": "0", "border-radius": "1rem 1rem 0 0",
        "box-shadow": "0 0 0 100vmax rgba(0, 0, 0, .45)"
      } : {
        "top": "auto", "bottom": "5rem", "left": "auto", "right": "1rem",
        "width": "min(24rem, calc(100% - 2rem))", "height": "min(38rem, calc(100% - 6.5rem))",
        "border": "1px solid rgba(128, 128, 128, .3)", "border-radius": "1rem",
        "box-shadow": "0 8px 32px rgba(0, 0, 0, .28)"
      });
    }
  }
  function add() {
    button = css(document.createElement("button"), {
      "position": "fixed", "z-index": "2147483647", "box-sizing": "border-box",
      "min-width": "48px", "min-height": "48px", "display": "inline-flex",
      "align-items": "center", "justify-content": "center", "border": "0",
      "border-radius": "999px", "background": "#4f46e5", "color": "#fff",
      "font-family": "Inter, ui-sans-serif, system-ui, -apple-system, 'Segoe UI', Roboto, sans-serif",
      "font-weight": "600", "line-height": "1.2", "box-shadow": "0 4px 14px rgba(79, 70, 229, .4)",
      "cursor": "pointer"});
    button.type = "button"; button.id = "hymt-desk-button"; button.textContent = label;
    button.setAttribute("aria-expanded", "false");
    button.addEventListener("click", function () {
      open = !open;
      if (open && !frame) {
        frame = css(document.createElement("iframe"), {
          "position": "fixed", "z-index": "2147483646", "box-sizing": "border-box",
          "background": "#fff"});
        frame.id = "hymt-desk-frame"; frame.title = label;
        // The visitor may speak instead of type: a frame of another origin gets the microphone
        // only when its page delegates it (the browser still asks the visitor first).
        frame.allow = "microphone";
        frame.src = origin + "/desk";
        document.body.appendChild(frame);
      }
      if (frame) frame.style.setProperty("display", open ? "block" : "none");
      button.textContent = open ? close : label;
      button.setAttribute("aria-expanded", open ? "true" : "false");
      place();
    });
    document.body.appendChild(button);
    place();
    if (phone) {
      if (phone.addEventListener) phone.addEventListener("change", place);
      else if (phone.addListener) phone.addListener(place);
    }
  }
  if (document.body) add(); else document.addEventListener("DOMContentLoaded", add);
})();
