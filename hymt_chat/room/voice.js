/* hymt-chat's recorder for the visitors' pages (the room's guest page, the desk's start page, the
   counter): a mic button records one utterance and hands it over whole, to be sent as
   {"type": "voice", "audio": <base64>, "mime": ...}.

   The page needs no "send" tap: a small voice activity detector (an AnalyserNode's RMS level)
   ends the recording after a pause that follows speech. A press of the button ends it too, and
   it never runs past a minute or the size the server takes (hymt_chat/room/voice.py). What the
   browser records is its own choice (WebM/Opus in Chromium and Firefox, MP4/AAC in Safari): the
   server decodes any of them.

   hymtVoice.attach(button, {state: fn(recording), send: fn(base64, mime), problem: fn(key),
                             limits: {max_bytes, longest_ms}}): limits are the page config's
   "recording" (hymt_chat/room/voice.py: recording_limits), the server's own caps.
   problem's keys are the guest words: "no_microphone" (none, or not allowed), "voice_refused".

   Listen (speech out): hymtVoice.listen(text, lang, label, serverVoices, ask) is a received
   message's 🔊 button, or null where nothing can read *lang*. It reads in the browser's own voice
   of that language (never another language's: public/kiosk.js's rule); else it calls ask(), and
   the page sends {"type": "speak", "ref": ...} and hands the server's {"type": "sound"} to
   hymtVoice.play(container, frame). hymtVoice.onVoices(fn): the browser's voices arrived (they
   load late in Chromium), so the page draws its buttons again. */
(function () {
  "use strict";
  var QUIET_MS = 800;  // a pause this long after speech ends the utterance
  var LONGEST_MS = 60000;  // without the server's limits (voice.recording_limits)
  var SILENT_MS = 10000;  // nothing heard yet: sent anyway, the server says what it hears
  var MAX_BYTES = 4 << 20;  // voice.MAX_RECORDING_BYTES
  var SPEECH_LEVEL = 0.015;  // RMS of speech near a phone: about -36 dBFS
  var TICK_MS = 50;
  var TYPES = ["audio/webm;codecs=opus", "audio/webm", "audio/ogg;codecs=opus", "audio/mp4"];

  function recordable() {
    return !!(window.MediaRecorder && navigator.mediaDevices &&
              navigator.mediaDevices.getUserMedia);
  }
  function pickType() {
    if (typeof MediaRecorder.isTypeSupported !== "function") return "";
    for (var i = 0; i < TYPES.length; i++) {
      if (MediaRecorder.isTypeSupported(TYPES[i])) return TYPES[i];
    }
    return "";  // the browser's own default
  }
  function release(stream, context) {
    if (stream) stream.getTracks().forEach(function (t) { t.stop(); });
    if (context && context.state !== "closed") context.close().catch(function () {});
  }

  function attach(button, on) {
    var take = null;  // the utterance under way: {stop: fn(send)}
    var limits = on.limits || {};
    var maxBytes = limits.max_bytes || MAX_BYTES, longestMs = limits.longest_ms || LONGEST_MS;
    button.setAttribute("aria-pressed", "false");
    function state(recording) {
      button.setAttribute("aria-pressed", recording ? "true" : "false");
      on.state(recording);
    }
    function begin() {
      if (!recordable()) { on.problem("no_microphone"); return; }
      // Made in the tap itself: a context made after the permission prompt may stay suspended.
      var Context = window.AudioContext || window.webkitAudioContext;
      var context = null;
      try { context = Context ? new Context() : null; } catch (e) { context = null; }
      var t = take = {stopped: false, send: false};
      t.stop = function (send) { t.stopped = true; t.send = send; };
      state(true);
      navigator.mediaDevices.getUserMedia({audio: {echoCancellation: true, noiseSuppression: true,
                                                    autoGainControl: true}})
        .then(function (stream) {
          if (t.stopped) {  // Stop pressed while the browser asked: nothing to send
            release(stream, context); if (take === t) take = null; state(false); return;
          }
          record(t, stream, context);
        }, function () {
          release(null, context); if (take === t) take = null; state(false);
          on.problem("no_microphone");
        });
    }
    function record(t, stream, context) {
      var type = pickType(), recorder;
      try {
        recorder = type ? new MediaRecorder(stream, {mimeType: type}) : new MediaRecorder(stream);
      } catch (e) {
        release(stream, context); take = null; state(false); on.problem("no_microphone"); return;
      }
      var chunks = [], size = 0, heard = false, quietSince = 0, began = Date.now(), floor = -1;
      var analyser = null, samples = null, timer = null;
      if (context) {
        try {
          analyser = context.createAnalyser(); analyser.fftSize = 2048;
          context.createMediaStreamSource(stream).connect(analyser);
          samples = new Float32Array(analyser.fftSize);
          if (context.state === "suspended") context.resume().catch(function () {});
        } catch (e) { analyser = null; }
      }
      recorder.ondataavailable = function (e) {
        if (!e.data || !e.data.size) return;
        chunks.push(e.data); size += e.data.size;
        if (size > maxBytes * 0.9) t.stop(true);  // what there is still fits the server's cap
      };
      recorder.onstop = function () {
        clearInterval(timer); release(stream, context);
        if (take === t) take = null;
        state(false);
        if (!t.send) return;
        var blob = new Blob(chunks, {type: recorder.mimeType || type || "audio/webm"});
        if (!blob.size || blob.size > maxBytes) { on.problem("voice_refused"); return; }
        var reader = new FileReader();
        reader.onload = function () {
          on.send(String(reader.result).replace(/^data:[^,]*,/, ""), blob.type);
        };
        reader.onerror = function () { on.problem("voice_refused"); };
        reader.readAsDataURL(blob);
      };
      t.stop = function (send) {
        if (t.stopped) return;
        t.stopped = true; t.send = send;
        if (recorder.state !== "inactive") recorder.stop();
      };
      recorder.start(250);
      timer = setInterval(function () {
        var now = Date.now();
        if (now - began > longestMs || (!heard && now - began > SILENT_MS)) { t.stop(true); return; }
        if (!analyser) return;
        analyser.getFloatTimeDomainData(samples);
        var sum = 0;
        for (var i = 0; i < samples.length; i++) sum += samples[i] * samples[i];
        var level = Math.sqrt(sum / samples.length);
        // The room's own noise: falls at once, rises slowly (speech never becomes the floor).
        floor = floor < 0 || level < floor ? level : floor + (level - floor) * 0.002;
        if (level >= Math.max(SPEECH_LEVEL, floor * 3)) { heard = true; quietSince = 0; }
        else if (heard) {
          if (!quietSince) quietSince = now;
          else if (now - quietSince >= QUIET_MS) t.stop(true);
        }
      }, TICK_MS);
    }
    button.addEventListener("click", function () {
      if (take) take.stop(true); else begin();
    });
    return {
      recording: function () { return take !== null; },
      cancel: function () { if (take) take.stop(false); }  // the page closed, or was reset
    };
  }

  // --- Listen -------------------------------------------------------------------------------

  var synth = (typeof window !== "undefined" && window.speechSynthesis) || null;
  var ALIASES = {fil: "tl", iw: "he", "in": "id", ji: "yi"};
  function normTag(tag) {
    var parts = String(tag || "").replace(/_/g, "-").toLowerCase().split("-");
    if (ALIASES[parts[0]]) parts[0] = ALIASES[parts[0]];
    return parts.join("-");
  }
  // The voice for a BCP-47 tag, for these pages and the chat page's kiosk (public/kiosk.js):
  // the exact tag first, then the same language (a voice on the device before a network one,
  // then the default one), else none: never another language's voice.
  function pickVoice(voices, tag) {
    var want = normTag(tag), primary = want.split("-")[0];
    if (!primary || !voices || !voices.length) return null;
    var exact = null, same = [];
    for (var i = 0; i < voices.length; i++) {
      var have = normTag(voices[i].lang);
      if (have === want && !exact) exact = voices[i];
      if (have.split("-")[0] === primary) same.push(voices[i]);
    }
    if (exact) return exact;
    if (!same.length) return null;
    same.sort(function (a, b) {
      return (b.localService ? 2 : 0) + (b["default"] ? 1 : 0) -
        ((a.localService ? 2 : 0) + (a["default"] ? 1 : 0));
    });
    return same[0];
  }
  function browserVoice(lang) {
    try { return synth ? pickVoice(synth.getVoices(), lang) : null; } catch (e) { return null; }
  }
  function listen(text, lang, label, serverVoices, ask) {
    var own = browserVoice(lang);
    if (!text || (!own && (serverVoices || []).indexOf(lang) < 0)) return null;
    var button = document.createElement("button");
    button.type = "button"; button.className = "listen"; button.textContent = "🔊";
    button.title = label; button.setAttribute("aria-label", label);
    button.addEventListener("click", function () {
      var voice = browserVoice(lang);
      if (voice) {
        synth.cancel();
        var said = new SpeechSynthesisUtterance(text);
        said.voice = voice; said.lang = voice.lang; synth.speak(said);
        return;
      }
      button.disabled = true;  // until the sound (or a refusal) comes back
      ask();
    });
    return button;
  }
  // The server's WAV in the message's own <audio>, played at once (the tap allowed sound).
  function play(container, frame) {
    var button = container.querySelector("button.listen");
    if (button) button.disabled = false;
    if (frame.type !== "sound") return;
    var audio = container.querySelector("audio");
    if (!audio) { audio = document.createElement("audio"); container.appendChild(audio); }
    audio.src = "data:" + (frame.mime || "audio/wav") + ";base64," + frame.audio;
    var started = audio.play();
    if (started && started.catch) started.catch(function () { audio.controls = true; });
  }
  function onVoices(fn) {
    if (synth && synth.addEventListener) synth.addEventListener("voiceschanged", fn);
  }

  if (typeof module !== "undefined" && module.exports) {  // node, for the tests
    module.exports = {pickVoice: pickVoice, normTag: normTag};
    return;
  }
  window.hymtVoice = {attach: attach, listen: listen, play: play, pickVoice: pickVoice,
                      onVoices: onVoices};
})();
