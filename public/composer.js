// hymt-chat: the composer's two habits (loaded by banner.js).
// 1. What the empty box says: each mode takes something else (documents, a customer's message,
//    a stranger's text), while Chainlit has one placeholder for every mode. The app says the
//    mode's own with {hymt: "composer", placeholder} at each chat's start (banner.js keeps the
//    first one, which may come before this file has loaded); it is put back whenever Chainlit
//    draws the box anew.
// 2. A command typed in full, then Enter, is sent: Chainlit's menu takes that Enter to turn
//    "/room" into a command chip, and a second Enter was needed to send it. A partly typed
//    command ("/ro") still only picks it from the menu.
(function () {
  "use strict";
  var placeholder = null;

  function apply() {
    var box = document.getElementById("chat-input");
    if (box && placeholder && box.getAttribute("placeholder") !== placeholder) {
      box.setAttribute("placeholder", placeholder);
    }
  }

  function said(data) {
    if (data && data.hymt === "composer" && typeof data.placeholder === "string") {
      placeholder = data.placeholder;
      apply();
    }
  }

  said(window.hymtComposer);
  window.addEventListener("message", function (e) {
    if (e.source === window) said(e.data);
  });
  new MutationObserver(apply).observe(document.documentElement,
                                      {childList: true, subtree: true, attributes: true,
                                       attributeFilter: ["placeholder"]});

  // The menu's entry that is exactly the typed command, if the menu shows one.
  function exactCommand(text) {
    var typed = /^\/([A-Za-z]+)$/.exec(text.trim());
    if (!typed) return null;
    var items = document.querySelectorAll(".command-item");
    for (var i = 0; i < items.length; i++) {
      var name = items[i].querySelector(".font-medium");
      if (name && name.textContent.trim().toLowerCase() === typed[1].toLowerCase()) {
        return items[i];
      }
    }
    return null;
  }

  function pressEnter(box) {
    box.dispatchEvent(new KeyboardEvent("keydown", {key: "Enter", code: "Enter", keyCode: 13,
                                                    which: 13, bubbles: true,
                                                    cancelable: true}));
  }

  document.addEventListener("keydown", function (e) {
    var box = e.target;
    if (e.key !== "Enter" || e.shiftKey || e.isComposing || !e.isTrusted || !box ||
        box.id !== "chat-input") return;
    var item = exactCommand("value" in box ? box.value : box.textContent || "");
    if (!item) return;
    // Pick that command (not whichever the menu highlights), then send it once the page
    // has drawn the chip: the box is empty then, and Enter sends the command alone.
    e.preventDefault();
    e.stopImmediatePropagation();
    item.click();
    var tries = 0;
    (function send() {
      var now = document.getElementById("chat-input");
      if (now && !(("value" in now ? now.value : now.textContent) || "").trim() &&
          !document.querySelector(".command-item")) {
        pressEnter(now);
      } else if (++tries < 250) {
        setTimeout(send, 20);
      }
    })();
  }, true);
})();
