// hymt-chat kiosk: large type, "Read aloud" with the browser's own speech (speechSynthesis, no
// server component), and a fresh session after the idle time, with a countdown first.
//
// It does nothing until the page shows a kiosk marker: the app attaches a custom element
// (public/elements/HymtKiosk.jsx) to kiosk messages, which renders
//   <span class="hymt-kiosk-marker" hidden data-idle="120" data-lang="es" data-label="…">TEXT</span>
// A marker with a text gets a "Read aloud" button, in the voice of its BCP-47 language (never in
// another language's voice: no voice, no button). While a marker is on the page the body has the
// class "hymt-kiosk", which scopes public/kiosk.css (loaded from here).
//
// The browser's voice for a language is chosen by the rooms' script (hymt_chat/room/voice.js,
// loaded before this one by banner.js), one rule for every page. The pure parts (idle clock,
// chunking) are exported to node for the tests.
(function () {
  "use strict";

  // --- pure helpers --------------------------------------------------------------------------

  // Speech engines cut long utterances short (Chrome after about 15 s): speak sentence-sized
  // chunks in a row. Cuts after sentence ends, then spaces, then anywhere.
  function chunkText(text, max) {
    max = max || 180;
    var rest = String(text || "").replace(/\s+/g, " ").trim();
    var out = [];
    while (rest.length > max) {
      var window_ = rest.slice(0, max + 1);
      var cut = -1;
      var re = /[.!?…。！？؟।]+["'”’»)\]]*\s*/g;
      var m;
      while ((m = re.exec(window_)) !== null) {
        if (m.index + m[0].length <= max) cut = m.index + m[0].length;
      }
      if (cut <= 0) cut = window_.lastIndexOf(" ");
      if (cut <= 0) cut = max;
      out.push(rest.slice(0, cut).trim());
      rest = rest.slice(cut).trim();
    }
    if (rest) out.push(rest);
    return out;
  }

  // Idle clock: remaining time, a warning period before the reset, and "dirty" (something to
  // forget): an untouched welcome screen is never reset again and again.
  function IdleClock(idleMs, warnMs, now) {
    this.idleMs = idleMs;
    this.warnMs = Math.min(warnMs, idleMs / 2);
    this.last = now;
    this.dirty = false;
  }
  IdleClock.prototype.touch = function (now) { this.last = now; this.dirty = true; };
  IdleClock.prototype.reset = function (now) { this.last = now; this.dirty = false; };
  IdleClock.prototype.remaining = function (now) {
    return Math.max(0, this.last + this.idleMs - now);
  };
  // What the page shows counts as use while someone has a conversation: a translation still
  // on its way (the visitor waits for it) or one that just came (they read it from now on).
  IdleClock.prototype.follow = function (now, waiting, answers) {
    if (this.dirty && (waiting || answers > (this.answers || 0))) this.touch(now);
    this.answers = answers;
  };
  IdleClock.prototype.state = function (now) {
    if (!this.dirty) return "idle";
    var left = this.remaining(now);
    if (left <= 0) return "expired";
    return left <= this.warnMs ? "warning" : "active";
  };

  if (typeof module !== "undefined" && module.exports) {
    module.exports = { chunkText: chunkText, IdleClock: IdleClock };
    return;
  }

  // --- the page ------------------------------------------------------------------------------

  var script = document.currentScript;
  var base = script && script.src ? script.src.replace(/\/public\/kiosk\.js.*$/, "") : "";
  var WARN_MS = 15000;
  var synth = window.speechSynthesis || null;
  function pickVoice(voices, tag) {
    return window.hymtVoice ? window.hymtVoice.pickVoice(voices, tag) : null;
  }
  var clock = new IdleClock(120000, WARN_MS, Date.now());
  var active = false;
  var scheduled = false;
  var still = "";  // "Still there? …" in the page's words, from the marker
  var speakingButton = null;

  function loadCss() {
    if (document.getElementById("hymt-kiosk-css")) return;
    var link = document.createElement("link");
    link.id = "hymt-kiosk-css";
    link.rel = "stylesheet";
    link.href = base + "/public/kiosk.css";
    document.head.appendChild(link);
  }

  function stopSpeaking() {
    if (synth) synth.cancel();
    if (speakingButton) speakingButton.setAttribute("aria-pressed", "false");
    speakingButton = null;
  }

  function speak(marker, button) {
    if (!synth) return;
    var wasMine = speakingButton === button;
    stopSpeaking();
    if (wasMine) return; // a second tap stops it
    var voice = pickVoice(synth.getVoices(), marker.getAttribute("data-lang"));
    if (!voice) return;
    var chunks = chunkText(marker.textContent);
    speakingButton = button;
    button.setAttribute("aria-pressed", "true");
    chunks.forEach(function (chunk, i) {
      var u = new SpeechSynthesisUtterance(chunk);
      u.voice = voice;
      u.lang = voice.lang;
      u.rate = 0.95;
      if (i === chunks.length - 1) {
        u.onend = u.onerror = function () {
          if (speakingButton === button) stopSpeaking();
        };
      }
      synth.speak(u);
    });
  }

  // The server's reading of the answer (an audio element in the same message), if it sent one.
  function serverSound(marker) {
    if (!marker.hasAttribute("data-spoken")) return null;
    var node = marker.parentNode;
    for (var depth = 0; node && depth < 8; depth++, node = node.parentNode) {
      var audio = node.querySelector && node.querySelector("audio");
      if (audio) return audio;
    }
    return null;
  }

  function replay(audio, button) {
    stopSpeaking();
    audio.currentTime = 0;
    var played = audio.play();
    if (played && played.catch) played.catch(function () {});
    button.setAttribute("aria-pressed", "true");
    audio.onended = function () { button.setAttribute("aria-pressed", "false"); };
  }

  function enhance(marker) {
    var text = (marker.textContent || "").trim();
    var next = marker.nextElementSibling;
    var has = next && next.classList.contains("hymt-tts-button");
    var lang = marker.getAttribute("data-lang");
    var sound = text ? serverSound(marker) : null;
    var voice = !sound && synth && text ? pickVoice(synth.getVoices(), lang) : null;
    if (!voice && !sound) {
      if (has) next.remove();
      return;
    }
    if (has) return;
    var button = document.createElement("button");
    button.type = "button";
    button.className = "hymt-tts-button";
    button.setAttribute("aria-pressed", "false");
    button.setAttribute("lang", marker.getAttribute("data-lang") || "");
    button.textContent = "\uD83D\uDD0A " + (marker.getAttribute("data-label") || "Read aloud");
    button.addEventListener("click", function () {
      var audio = serverSound(marker);  // looked up again: the message may have been redrawn
      if (audio) replay(audio, button); else speak(marker, button);
    });
    marker.parentNode.insertBefore(button, marker.nextSibling);
  }

  function scan() {
    scheduled = false;
    var markers = document.querySelectorAll("span.hymt-kiosk-marker");
    var now = markers.length > 0;
    if (now !== active) {
      active = now;
      document.body.classList.toggle("hymt-kiosk", active);
      if (!active) { stopSpeaking(); hideWarning(); }
    }
    for (var i = 0; i < markers.length; i++) {
      freshScreen(markers[i]);
      var idle = parseInt(markers[i].getAttribute("data-idle"), 10);
      if (idle > 0) clock.idleMs = idle * 1000;
      // The warning in the page's words (the server's marker carries them).
      if (markers[i].getAttribute("data-still")) still = markers[i].getAttribute("data-still");
      enhance(markers[i]);
    }
    clock.warnMs = Math.min(WARN_MS, clock.idleMs / 2);
  }

  // A welcome that newly came and is alone on screen is a fresh start, whoever made it: when
  // the server's backstop wiped the screen first, the browser's own clock starts again too,
  // rather than wiping the fresh screen a second time under the next visitor's first tap.
  function freshScreen(marker) {
    if (!marker.hasAttribute("data-welcome") || marker.hasAttribute("data-seen")) return;
    marker.setAttribute("data-seen", "true");
    if (hasConversation()) return;
    if (answersShown() > 1) return;
    clock.reset(Date.now());
    hideWarning();
  }

  function schedule() {
    if (!scheduled) {
      scheduled = true;
      setTimeout(scan, 60);
    }
  }

  function warning() {
    var el = document.getElementById("hymt-kiosk-idle");
    if (!el) {
      el = document.createElement("div");
      el.id = "hymt-kiosk-idle";
      el.setAttribute("role", "alertdialog");
      el.setAttribute("aria-live", "assertive");
      el.addEventListener("click", function () { activity(); });
      document.body.appendChild(el);
    }
    return el;
  }

  function hideWarning() {
    var el = document.getElementById("hymt-kiosk-idle");
    if (el) el.removeAttribute("data-open");
  }

  function answersShown() {
    return document.querySelectorAll('[data-step-type="assistant_message"]').length;
  }

  function hasConversation() {
    return !!document.querySelector('[data-step-type="user_message"]');
  }

  function startAfresh() {
    stopSpeaking();
    hideWarning();
    clock.reset(Date.now());
    var button = document.getElementById("new-chat-button");
    if (button) {
      button.click(); // keeps the kiosk profile; the server drops the old session
      setTimeout(function () { // confirm_new_chat = true shows a dialog: confirm it
        var confirm = document.querySelector("#new-chat-dialog #confirm");
        if (confirm) confirm.click();
      }, 300);
    } else {
      window.location.assign(base + "/");
    }
  }

  function tick() {
    if (!active) return;
    var now = Date.now();
    if (synth && synth.speaking) clock.touch(now); // listening is using the kiosk
    clock.follow(now, !!document.getElementById("stop-button"),  // Chainlit's Stop: a task runs
                 answersShown());
    if (!hasConversation() && !clock.dirty) return;
    var state = clock.state(now);
    if (state === "expired") {
      startAfresh();
    } else if (state === "warning") {
      var el = warning();
      var seconds = String(Math.ceil(clock.remaining(now) / 1000));
      el.textContent = still ? still.replace("{{seconds}}", seconds)
        : "Still there? Starting afresh in " + seconds + " s \u2014 tap anywhere to continue.";
      el.setAttribute("data-open", "true");
    } else {
      hideWarning();
    }
  }

  function activity() {
    clock.touch(Date.now());
    hideWarning();
  }

  function start() {
    loadCss();
    ["pointerdown", "keydown", "touchstart", "wheel", "input"].forEach(function (type) {
      document.addEventListener(type, activity, { capture: true, passive: true });
    });
    new MutationObserver(schedule).observe(document.body, { childList: true, subtree: true });
    if (synth && "onvoiceschanged" in synth) synth.onvoiceschanged = schedule;
    setInterval(tick, 1000);
    scan();
  }

  window.hymtKiosk = { scan: scan, startAfresh: startAfresh };

  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", start);
  } else {
    start();
  }
})();
