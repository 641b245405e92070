// hymt-chat: a small banner that says when the model is warming up or down, and when it is the
// embedded demo model (not Hunyuan-MT quality). Reads GET /hymt/status; text only (no HTML).
// It is a row of the page above Chainlit's header, not a layer over it: floating, it covered
// the header's controls on a phone and the open language list on a desktop.
(function () {
  "use strict";
  var script = document.currentScript;
  var base = script && script.src ? script.src.replace(/\/public\/banner\.js.*$/, "") : "";
  var dismissed = {};
  // The page's words in its language (GET /hymt/words: the reader's choice, else the browser's).
  var words = {}, lang = navigator.language || "en";

  function say(key, english) {
    return words[key] || english;
  }

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
      close.setAttribute("aria-label", say("banner_hide", "Hide"));
      close.addEventListener("click", function () {
        dismissed[el.getAttribute("data-kind")] = true;
        el.removeAttribute("data-kind");
      });
      el.appendChild(text);
      el.appendChild(close);
      place(el);
    }
    return el;
  }

  // Above the header, in the page's column: the conversation below gets shorter, nothing is
  // covered. Until Chainlit has drawn its header (the sign-in page has none) it waits, hidden.
  function place(el) {
    var header = document.getElementById("header");
    if (header && header.parentNode && el.nextSibling !== header) {
      header.parentNode.insertBefore(el, header);
    } else if (!header && el.parentNode !== document.body) {
      document.body.appendChild(el);
    }
    el.classList.toggle("hymt-placed", !!header);
  }

  new MutationObserver(function () {  // Chainlit draws its header anew (a new chat, a profile)
    var el = document.getElementById("hymt-banner");
    if (el) place(el);
  }).observe(document.documentElement, {childList: true, subtree: true});

  function show(kind, text, title) {
    var el = banner();
    if (dismissed[kind]) {
      el.removeAttribute("data-kind");
      return;
    }
    el.firstChild.textContent = text;
    el.lastChild.setAttribute("aria-label", say("banner_hide", "Hide"));
    el.title = title || text;
    el.setAttribute("data-kind", kind);
  }

  function hide() {
    var el = document.getElementById("hymt-banner");
    if (el) el.removeAttribute("data-kind");
  }

  // Text over the app's input limit is not sent: socket.io would drop a message over its cap
  // without a word, and the text would be gone. The composer keeps it; the banner says why.
  var maxChars = 0;

  function tooLong() {
    var input = document.getElementById("chat-input");
    var size = input ? Array.from(input.value || input.textContent || "").length : 0;
    if (!maxChars || size <= maxChars) return false;
    dismissed.limit = false;
    show("limit", say("banner_limit", "This text is {{size}} characters; the limit is " +
      "{{limit}}. Split it into parts, or send it as a file. Nothing was sent; your text is " +
      "still in the box.").replace("{{size}}", size.toLocaleString(lang))
      .replace("{{limit}}", maxChars.toLocaleString(lang)));
    return true;
  }

  document.addEventListener("keydown", function (e) {
    if (e.key === "Enter" && !e.shiftKey && !e.isComposing && e.target &&
        e.target.id === "chat-input" && tooLong()) {
      e.preventDefault();
      e.stopImmediatePropagation();
    }
  }, true);
  document.addEventListener("click", function (e) {
    var button = e.target && e.target.closest && e.target.closest("#chat-submit");
    if (button && tooLong()) {
      e.preventDefault();
      e.stopImmediatePropagation();
    }
  }, true);

  function poll() {
    fetch(base + "/hymt/status", { cache: "no-store" })
      .then(function (r) { return r.json(); })
      .then(function (s) {
        maxChars = s.max_input_chars || 0;
        var el = document.getElementById("hymt-banner");
        if (el && el.getAttribute("data-kind") === "limit") {
          setTimeout(poll, 30000);
          return;  // the size notice stays until the next send attempt
        }
        render(s);
        setTimeout(poll, s.vllm === "ready" ? 30000 : 3000);
      })
      .catch(function () { setTimeout(poll, 5000); });
  }

  var shown = null;  // the last state shown: said again when the page's words come

  function render(s) {
    var el = document.getElementById("hymt-banner");
    if (el && el.getAttribute("data-kind") === "limit") return;
    shown = s;
    if (s.vllm === "starting" || s.vllm === "restarting") {
      show("wait", s.vllm === "restarting"
        ? say("banner_restarting", "Translation model restarting\u2026 you can type now: " +
          "messages are translated as soon as it is ready.")
        : say("banner_warming", "Translation model warming up\u2026 you can type now: " +
          "messages are translated as soon as it is ready."));
    } else if (s.vllm === "down") {
      show("down", say("banner_down", "The translation model is not reachable right now."));
    } else if (s.demo) {
      show("demo", say("banner_demo", "Demo model \u2014 a small stand-in, not Hunyuan-MT " +
        "quality"), words.banner_demo ? null : s.notice);
    } else {
      hide();
    }
  }

  // The kiosk's script (config.toml takes one custom_js): it stays idle unless the page shows a
  // kiosk message (hymt_chat/modes/kiosk.py), and loads its own stylesheet. The rooms' voice
  // script comes first (in order: async off): the kiosk picks a browser voice with its rule.
  var v = document.createElement("script");
  v.src = base + "/room/voice.js";
  v.async = false;
  document.head.appendChild(v);
  var k = document.createElement("script");
  k.src = base + "/public/kiosk.js";
  k.async = false;
  document.head.appendChild(k);
  // The support desk's typing line, both ways (idle outside an agent's desk conversation).
  var d = document.createElement("script");
  d.src = base + "/public/desk.js";
  document.head.appendChild(d);
  // The composer's placeholder for the mode and a full /command sent by Enter. The mode's
  // placeholder is kept here until composer.js has loaded (this file runs before the socket).
  window.addEventListener("message", function (e) {
    if (e.source === window && e.data && e.data.hymt === "composer") window.hymtComposer = e.data;
  });
  var c = document.createElement("script");
  c.src = base + "/public/composer.js";
  document.head.appendChild(c);

  // The few strings Chainlit's page writes in English whatever its language: in the page's.
  var ENGLISH = { "Toggle theme": "script_theme", "Close": "script_close",
                  "View PDF": "script_pdf_view",
                  "A modal with a larger view of the PDF.": "script_pdf_about" };
  // The PDF viewer's (react-pdf's) notes while a PDF loads, or when it cannot.
  var PDF_NOTES = { "Loading preview...": "script_pdf_loading",
                    "Loading PDF...": "script_pdf_loading",
                    "Loading page…": "script_pdf_loading",
                    "Failed to load PDF file.": "script_pdf_failed",
                    "Failed to load the page.": "script_pdf_failed" };
  // Tooltips of the PDF viewer's buttons.
  var TITLES = { "Print/Open PDF": "script_pdf_open", "Download PDF": "script_pdf_download" };
  // Labels Chainlit's page gives its controls in English (screen readers read them).
  var ARIA = {
    "Open PDF in a larger view": "script_pdf_larger", "Close lightbox": "script_close",
    "Close toast": "script_close", "Go to next page": "script_next_page",
    "Go to previous page": "script_previous_page", "Toggle Sidebar": "script_sidebar",
    "Suggestions": "script_suggestions",  // the composer's menu of commands (cmdk's list)
    "Close": "script_close"  // the PDF's larger view
  };
  // Run in the mutation observer's own callback, before the page is painted or read: a frame
  // later, a screen reader (or a test reading the page) could meet the English label first,
  // as an avatar mounted once its image loads. Only text nodes and attributes change here,
  // which the observer (child lists only) does not report back.
  function relabel() {
    document.querySelectorAll("img.logo[alt=logo]").forEach(function (img) {
      img.alt = document.title;  // the product's name, not the word "logo"
    });
    // A message's avatar: "Avatar for hymt-chat" says its author, by name alone.
    document.querySelectorAll("img[alt^='Avatar for ']").forEach(function (img) {
      img.alt = img.alt.slice(11);
    });
    // The sign-in page's picture beside the form is decoration: nothing to read out.
    document.querySelectorAll("img[alt=Image]").forEach(function (img) { img.alt = ""; });
    document.querySelectorAll("[aria-label]").forEach(function (el) {
      var label = el.getAttribute("aria-label"), key = ARIA[label];
      // The toaster's region: "Notifications alt+T" (its shortcut kept as it is).
      if (!key && /^Notifications /.test(label || "")) {
        if (words.script_notifications) {
          el.setAttribute("aria-label", words.script_notifications + label.slice(13));
        }
        return;
      }
      if (key && words[key]) el.setAttribute("aria-label", words[key]);
    });
    document.querySelectorAll("[title]").forEach(function (el) {
      var key = TITLES[el.getAttribute("title")];
      if (key && words[key]) el.setAttribute("title", words[key]);
    });
    document.querySelectorAll(".react-pdf__message").forEach(function (note) {
      var walker = document.createTreeWalker(note, NodeFilter.SHOW_TEXT), text;
      while ((text = walker.nextNode())) {
        var key = PDF_NOTES[text.nodeValue.trim()];
        if (key && words[key]) text.nodeValue = words[key];
      }
    });
    document.querySelectorAll(".sr-only").forEach(function (span) {
      var text = span.firstChild, key = ENGLISH[span.textContent];
      // The text node's value, not a new node: React still owns and updates the same one.
      if (key && words[key] && text && text.nodeType === 3 && !text.nextSibling) {
        text.nodeValue = words[key];
      }
    });
    // Chainlit's refusals of files past its limits, English toasts ("File is larger than
    // 20 MB", "Too many files"). Its limits are far above the app's, which says the rest
    // itself (.chainlit/config.toml): these come only for a file or a pile too big to send.
    document.querySelectorAll("[data-sonner-toast] [data-title]").forEach(function (title) {
      var text = title.firstChild, over;
      if (!text || text.nodeType !== 3 || text.nextSibling) return;
      over = /^File is larger than ([\d.]+) MB$/.exec(text.nodeValue);
      if (over && words.script_file_over) {
        text.nodeValue = words.script_file_over.replace("{{limit}}", over[1]);
      } else if (text.nodeValue === "Too many files" && words.script_too_many_files) {
        text.nodeValue = words.script_too_many_files;
      }
    });
  }

  function begin() {  // the state at once; the words as soon as they come (English till then)
    poll();
    fetch(base + "/hymt/words?language=" + encodeURIComponent(lang), { cache: "no-store" })
      .then(function (r) { return r.json(); })
      .then(function (w) {
        words = w.words || {};
        lang = w.lang || lang;
        if (shown) render(shown);
      })
      .catch(function () { /* English words */ })
      .then(function () {
        relabel();
        new MutationObserver(relabel).observe(document.body, { childList: true, subtree: true });
      });
  }

  // The reader picked the page's language in the settings: the page again, in it (the
  // server keeps ?lang= as the reader's choice).
  window.addEventListener("message", function (e) {
    var d = e.data;
    if (e.source !== window || !d || d.hymt !== "page_language" || typeof d.code !== "string") {
      return;
    }
    var query = new URLSearchParams(location.search);
    query.set("lang", d.code);
    location.search = query.toString();
  });

  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", begin);
  } else {
    begin();
  }
})();
