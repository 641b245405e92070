// hymt-chat: the support desk's typing line in the agent's tab (loaded by banner.js).
// Chainlit forwards every window message of its page to the app (@cl.on_window_message), and
// posts the app's cl.send_window_message to the page's parent — the page itself when it is
// not framed. So: while the agent types in the composer, this says {hymt: "typing"} (at most
// every 2 s; not for a /command) and the app tells the visitor's page; when a visitor types,
// the app's {hymt: "visitor_typing", key, text, seconds} shows a line above the composer that
// ends by itself after its seconds (0: their message came). A held reply the agent chose to
// edit comes back as {hymt: "edit", text}: put in the composer, to change and send. Text only,
// no HTML.
(function () {
  "use strict";
  var typedAt = 0, lines = {};

  document.addEventListener("input", function (e) {
    var box = e.target;
    if (!box || box.id !== "chat-input") return;
    var text = ("value" in box ? box.value : box.textContent) || "", now = Date.now();
    if (!text.trim() || text.trim().charAt(0) === "/" || now - typedAt < 2000) return;
    typedAt = now;
    window.postMessage({hymt: "typing"}, window.location.origin);
  }, true);
  document.addEventListener("keydown", function (e) {  // sent: the next keystroke tells at once
    if (e.key === "Enter" && !e.shiftKey && e.target && e.target.id === "chat-input") typedAt = 0;
  }, true);

  function box() {
    var el = document.getElementById("hymt-typing");
    if (!el) {
      el = document.createElement("div");
      el.id = "hymt-typing";
      el.setAttribute("role", "status");
      var rules = {"position": "fixed", "left": "50%", "bottom": "7.5rem", "z-index": "50",
                   "transform": "translateX(-50%)", "padding": ".2rem .7rem",
                   "border-radius": ".8rem", "font-size": ".85rem", "opacity": ".85",
                   "background": "#8882", "white-space": "pre-line", "pointer-events": "none"};
      for (var k in rules) el.style.setProperty(k, rules[k]);
      document.body.appendChild(el);
    }
    return el;
  }

  function draw() {
    var now = Date.now(), said = [];
    for (var key in lines) {
      if (lines[key].until > now) said.push(lines[key].text); else delete lines[key];
    }
    var el = box();
    el.textContent = said.join("\n");
    el.hidden = said.length === 0;
  }

  function edit(text) {  // the composer is a contenteditable (or a textarea): React reads input
    var el = document.getElementById("chat-input");
    if (!el) return;
    if ("value" in el) {
      var set = Object.getOwnPropertyDescriptor(Object.getPrototypeOf(el), "value");
      if (set && set.set) set.set.call(el, text); else el.value = text;
    } else {
      el.textContent = text;
    }
    el.dispatchEvent(new Event("input", {bubbles: true}));
    el.focus();
  }

  window.addEventListener("message", function (e) {
    var d = e.data;
    if (e.source !== window || !d || typeof d.text !== "string") return;
    if (d.hymt === "edit") { edit(d.text); return; }
    if (d.hymt !== "visitor_typing") return;
    var seconds = Number(d.seconds) || 0;
    lines[String(d.key)] = {text: d.text, until: Date.now() + seconds * 1000};
    draw();
    if (seconds > 0) setTimeout(draw, seconds * 1000 + 50);
  });
})();
