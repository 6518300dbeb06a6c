// Review desk keys. Loaded from 'self' (no inline script, no inline handlers): every
// key acts on an element of the page carrying data-key, so each still works as a plain
// button or link without this file.
(function () {
  "use strict";

  // Preset reason for each verdict, until the editor picks one.
  var DEFAULT_REASON = {
    duplicate: "same_text",
    near_duplicate: "cosmetic",
    revision: "updated",
    distinct: "different_item",
    unsure: "unclear",
  };

  function typing(target) {
    if (!target || !target.tagName) return false;
    var tag = target.tagName.toLowerCase();
    return tag === "input" && !/^(radio|checkbox|button|submit)$/.test(target.type) ||
      tag === "textarea" || tag === "select" || target.isContentEditable;
  }

  function labelForm() {
    return document.querySelector("form[data-label-form]");
  }

  function chooseVerdict(radio) {
    radio.checked = true;
    var form = radio.form;
    var code = form && form.querySelector("select[name=reason_code]");
    if (code && !code.dataset.touched && DEFAULT_REASON[radio.value]) {
      code.value = DEFAULT_REASON[radio.value];
    }
    var reason = form && form.querySelector("input[name=reason]");
    if (reason) reason.focus();
  }

  // A reason's key picks that preset (the verdict's key no longer replaces it).
  function chooseReason(option) {
    var select = option.closest("select");
    if (!select) return;
    select.value = option.value;
    select.dataset.touched = "1";
  }

  document.addEventListener("change", function (event) {
    var t = event.target;
    if (t && t.name === "reason_code") t.dataset.touched = "1";
  });

  document.addEventListener("click", function (event) {
    var t = event.target.closest ? event.target.closest("[data-history-back],[data-show-keys]") : null;
    if (!t) return;
    event.preventDefault();
    if (t.hasAttribute("data-history-back")) history.back();
    else showKeys();
  });

  function showKeys() {
    var dialog = document.getElementById("keys-help");
    if (dialog && !dialog.open) dialog.showModal();
  }

  // The key a shortcut answers to: the character when it is one of the desk's keys (so a
  // Latin layout uses its printed letters); otherwise the physical key (event.code), so a
  // Russian or Greek layout, a full-width digit or an AZERTY digit row reaches the same
  // shortcuts without switching layout. Shifted Latin letters stay themselves (no shortcut).
  function shortcutKey(event) {
    var key = event.key || "";
    if (/^[a-z0-9?]$/.test(key) || key.length !== 1 || /^[A-Z]$/.test(key)) return key;
    var code = event.code || "";
    var m = /^(?:Digit|Numpad)([0-9])$/.exec(code);
    if (m) return m[1];
    m = /^Key([A-Z])$/.exec(code);
    if (m && !event.shiftKey && key.charCodeAt(0) > 127) return m[1].toLowerCase();
    if (code === "Slash" && event.shiftKey) return "?";
    return key;
  }

  // While an input method composes (Pinyin, Telex, Kana…), its keys belong to it: Chromium
  // and Firefox flag them isComposing, Safari sends the closing Enter as keyCode 229.
  function composing(event) {
    return event.isComposing || event.keyCode === 229;
  }

  document.addEventListener("keydown", function (event) {
    if (composing(event)) return;
    if (event.ctrlKey || event.metaKey || event.altKey) return;
    if (event.key === "Escape" && typing(event.target)) {
      event.target.blur();
      return;
    }
    if (typing(event.target)) return; // Enter in a field submits its form natively.
    var key = shortcutKey(event);
    if (key === "?") {
      event.preventDefault();
      showKeys();
      return;
    }
    if (key === "Enter") {
      var form = labelForm();
      if (form && (!event.target.closest || !event.target.closest("button, a"))) {
        event.preventDefault();
        form.requestSubmit();
      }
      return;
    }
    // data-key holds one key or several, separated by spaces.
    var el = document.querySelector('[data-key~="' + (window.CSS && CSS.escape ? CSS.escape(key) : key) + '"]');
    if (!el) return;
    event.preventDefault();
    if (el.type === "radio") chooseVerdict(el);
    else if (el.tagName === "OPTION") chooseReason(el);
    else el.click();
  });

  // After htmx swaps in the next pair, start from the top with nothing focused.
  document.addEventListener("htmx:afterSwap", function (event) {
    if (event.detail && event.detail.target && event.detail.target.id === "pair-review") {
      window.scrollTo(0, 0);
      if (document.activeElement && document.activeElement.blur) document.activeElement.blur();
    }
  });
})();
