// hymt-chat: a small banner that says when the model is warming up or down, and when it is the
// embedded demo model (not Hunyuan-MT quality). Reads GET /hymt/status; text only (no HTML).
(function () {
  "use strict";
  var script = document.currentScript;
  var base = script && script.src ? script.src.replace(/\/public\/banner\.js.*$/, "") : "";
  var dismissed = {};

  function banner() {
    var el = document.getElementById("hymt-banner");
    if (!el) {
      el = document.createElement("div");
      el.id = "hymt-banner";
      el.setAttribute("role", "status");
      var text = document.createElement("span");
      var close = document.createElement("button");
      close.type = "button";
      close.textContent = "\u00d7";
      close.setAttribute("aria-label", "Hide");
      close.addEventListener("click", function () {
        dismissed[el.getAttribute("data-kind")] = true;
        el.removeAttribute("data-kind");
      });
      el.appendChild(text);
      el.appendChild(close);
      document.body.appendChild(el);
    }
    return el;
  }

  function show(kind, text, title) {
    var el = banner();
    if (dismissed[kind]) {
      el.removeAttribute("data-kind");
      return;
    }
    el.firstChild.textContent = text;
    el.title = title || text;
    el.setAttribute("data-kind", kind);
  }

  function hide() {
    var el = document.getElementById("hymt-banner");
    if (el) el.removeAttribute("data-kind");
  }

  function poll() {
    fetch(base + "/hymt/status", { cache: "no-store" })
      .then(function (r) { return r.json(); })
      .then(function (s) {
        if (s.vllm === "starting" || s.vllm === "restarting") {
          show("wait", "Translation model " + (s.vllm === "restarting" ? "restarting" : "warming up") +
            "\u2026 you can type now: messages are translated as soon as it is ready.");
        } else if (s.vllm === "down") {
          show("down", "The translation model is not reachable right now.");
        } else if (s.demo) {
          show("demo", "Demo model \u2014 a small stand-in, not Hunyuan-MT quality", s.notice);
        } else {
          hide();
        }
        setTimeout(poll, s.vllm === "ready" ? 30000 : 3000);
      })
      .catch(function () { setTimeout(poll, 5000); });
  }

  // The kiosk's script (config.toml takes one custom_js): it stays idle unless the page shows a
  // kiosk message (hymt_chat/kiosk.py), and loads its own stylesheet.
  var k = document.createElement("script");
  k.src = base + "/public/kiosk.js";
  document.head.appendChild(k);

  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", poll);
  } else {
    poll();
  }
})();
