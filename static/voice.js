/*
 * butai — the stage page's voice: a line's audio, or the browser's own speech.
 *
 * The 「読み上げ」 toggle is off by default and remembered per device
 * (localStorage). Nothing sounds before the player has touched the page in
 * this visit (no autoplay before a user gesture): turning the toggle on is
 * such a gesture and reads the current line at once; with the toggle left on
 * from an earlier visit, lines are read after the first tap or key press.
 * A line with `audio` plays that file (the page's CSP media-src decides which
 * origins may serve it); a line without is read by speechSynthesis, with a
 * Japanese voice when the browser has one and the speaking character's pitch
 * and rate from its manifest.
 *
 * app.js announces each line its bubble shows with a `butai:line` event (the
 * lines of one turn one after another, each once `fresh`); this file only
 * listens, so the page works the same without it.
 */
(function () {
  "use strict";

  var STORAGE_KEY = "butai.voice";
  var toggle = document.getElementById("voice-toggle");
  if (!toggle) return;

  var on = false;
  try { on = window.localStorage.getItem(STORAGE_KEY) === "on"; } catch (e) { on = false; }
  var unlocked = false;        // a user gesture happened in this visit
  var latest = null;           // the line now shown: { key, text, audio, voice }
  var player = null;           // one audio element, reused

  function str(v) { return typeof v === "string" ? v : ""; }
  function isObject(v) { return v !== null && typeof v === "object" && !Array.isArray(v); }

  function showState() {
    toggle.setAttribute("aria-pressed", on ? "true" : "false");
    toggle.classList.toggle("is-on", on);
    toggle.dataset.unlocked = unlocked ? "true" : "false";
  }

  function save() {
    try { window.localStorage.setItem(STORAGE_KEY, on ? "on" : "off"); } catch (e) { /* private mode */ }
  }

  function audioUrl(raw) {
    if (!raw) return "";
    try {
      var u = new URL(raw, location.href);
      return u.protocol === "https:" || u.protocol === "http:" ? u.href : "";
    } catch (e) {
      return "";
    }
  }

  function japaneseVoice(lang) {
    var voices = window.speechSynthesis.getVoices ? window.speechSynthesis.getVoices() : [];
    var prefix = (lang || "ja").slice(0, 2).toLowerCase();
    for (var i = 0; i < voices.length; i++) {
      if (str(voices[i].lang).toLowerCase().indexOf(prefix) === 0) return voices[i];
    }
    return null;
  }

  function stop() {
    if (player) player.pause();
    if (window.speechSynthesis) window.speechSynthesis.cancel();
  }

  function speak(line) {
    if (!window.speechSynthesis || typeof window.SpeechSynthesisUtterance !== "function") return;
    var voice = line.voice || {};
    var utterance = new window.SpeechSynthesisUtterance(line.text);
    utterance.lang = str(voice.lang) || "ja-JP";
    if (typeof voice.pitch === "number") utterance.pitch = voice.pitch;
    if (typeof voice.rate === "number") utterance.rate = voice.rate;
    var chosen = japaneseVoice(utterance.lang);
    if (chosen) utterance.voice = chosen;
    window.speechSynthesis.cancel();
    window.speechSynthesis.speak(utterance);
  }

  function play(line) {
    if (!line || !line.text) return;
    stop();
    if (line.audio) {
      if (!player) {
        player = new Audio();
        player.preload = "auto";
      }
      player.src = line.audio;
      var started = player.play();
      if (started && typeof started.catch === "function") {
        // A file that cannot play (blocked, missing) is read aloud instead; one cut short by the next
        // line (pushed lines can follow each other within the clip) is not.
        started.catch(function (err) {
          if (latest === line && !(err && err.name === "AbortError")) speak(line);
        });
      }
      return;
    }
    speak(line);
  }

  document.addEventListener("butai:line", function (ev) {
    var d = isObject(ev.detail) ? ev.detail : null;
    if (!d) return;
    var line = { key: str(d.key), text: str(d.text), audio: audioUrl(str(d.audio)),
                 voice: isObject(d.voice) ? d.voice : null };
    latest = line;
    // A line on the page when it opened is not read out; each new one is, once allowed.
    if (d.fresh === true && on && unlocked) play(line);
  });

  function unlock() {
    if (unlocked) return;
    unlocked = true;
    showState();
  }
  ["pointerdown", "keydown", "touchend"].forEach(function (type) {
    document.addEventListener(type, unlock, { capture: true, passive: true });
  });

  toggle.addEventListener("click", function () {
    unlock();
    on = !on;
    save();
    showState();
    if (on) play(latest);
    else stop();
  });

  toggle.hidden = false;
  showState();
})();
