/*
 * butai — the stage page's voice: a line's audio, or the browser's own speech.
 *
 * The 「読み上げ」 toggle is off by default and remembered per device
 * (localStorage). Nothing sounds before the player has touched the page in
 * this visit (no autoplay before a user gesture): turning the toggle on is
 * such a gesture and reads the current line at once; with the toggle left on
 * from an earlier visit, lines are read after the first tap or key press.
 *
 * The lines of a turn are said one after another, in order, each to its end:
 * a line with `audio` plays that file (the page's CSP media-src decides which
 * origins may serve it); a line whose audio the stage is still rendering
 * (`pending`) waits for it — it comes on the page's push — and is read by
 * speechSynthesis if it does not come in time or cannot be rendered; a line
 * with neither is read by speechSynthesis, with a Japanese voice when the
 * browser has one and the speaking character's pitch and rate from its
 * manifest. A new turn drops what the last one had not said yet.
 *
 * app.js announces each line its bubble shows with a `butai:line` event and
 * each line's audio that arrives later with `butai:audio`; the line shown before
 * this file started is asked for with `butai:voice-ready` and comes back as
 * `butai:current` (the scripts load apart); this file tells it
 * with `butai:voice` ({id, state: queued | playing | done}) so that the bubble
 * stays on a line while it is being said. Without this file the page works
 * the same, silently.
 */
(function () {
  "use strict";

  var STORAGE_KEY = "butai.voice";
  // How long a line waits for the audio the stage renders before the browser's voice reads it.
  var PENDING_WAIT_MS = 12000;
  var toggle = document.getElementById("voice-toggle");
  if (!toggle) return;

  var on = false;
  try { on = window.localStorage.getItem(STORAGE_KEY) === "on"; } catch (e) { on = false; }
  var unlocked = false;        // a user gesture happened in this visit
  var latest = null;           // the line now shown: { id, turn, text, audio, pending, voice }
  var queue = [];              // lines to say, in order; queue[0] is being said (or waited for)
  var saying = null;           // the line being said now
  var waitTimer = null;
  var guardTimer = null;       // a line that never says it ended (no audio device, no speech voice) ends anyway
  var player = null;           // one audio element, reused
  var arrived = {};            // id -> { audio, failed }: audio that came before its line was said

  function str(v) { return typeof v === "string" ? v : ""; }
  function isObject(v) { return v !== null && typeof v === "object" && !Array.isArray(v); }

  function showState() {
    toggle.setAttribute("aria-pressed", on ? "true" : "false");
    toggle.classList.toggle("is-on", on);
    toggle.dataset.unlocked = unlocked ? "true" : "false";
    document.body.dataset.voiceSaying = saying ? saying.id : "";
  }

  function save() {
    try { window.localStorage.setItem(STORAGE_KEY, on ? "on" : "off"); } catch (e) { /* private mode */ }
  }

  function tell(line, state, how) {
    if (!line || !line.id) return;
    document.dispatchEvent(new CustomEvent("butai:voice", { detail: { id: line.id, state: state, how: how || "" } }));
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

  function guard(line, ms) {
    clearTimeout(guardTimer);
    guardTimer = setTimeout(function () { guardTimer = null; finished(line, "timeout"); }, ms);
  }

  function silence() {
    clearTimeout(waitTimer);
    waitTimer = null;
    clearTimeout(guardTimer);
    guardTimer = null;
    if (player) player.pause();
    if (window.speechSynthesis) window.speechSynthesis.cancel();
  }

  // Says nothing more: the line being said and those waiting are dropped (each told done).
  function stopAll() {
    silence();
    var dropped = queue;
    queue = [];
    saying = null;
    dropped.forEach(function (line) { tell(line, "done", "dropped"); });
    showState();
  }

  function finished(line, how) {
    if (saying !== line) return;
    clearTimeout(waitTimer);
    waitTimer = null;
    clearTimeout(guardTimer);
    guardTimer = null;
    saying = null;
    if (queue[0] === line) queue.shift();
    tell(line, "done", how);
    showState();
    next();
  }

  function speak(line) {
    if (!window.speechSynthesis || typeof window.SpeechSynthesisUtterance !== "function") {
      finished(line, "none");
      return;
    }
    var voice = line.voice || {};
    var utterance = new window.SpeechSynthesisUtterance(line.text);
    utterance.lang = str(voice.lang) || "ja-JP";
    if (typeof voice.pitch === "number") utterance.pitch = voice.pitch;
    if (typeof voice.rate === "number") utterance.rate = voice.rate;
    var chosen = japaneseVoice(utterance.lang);
    if (chosen) utterance.voice = chosen;
    utterance.onend = function () { finished(line, "speech"); };
    utterance.onerror = function () { finished(line, "speech"); };
    document.body.dataset.voicePlayed = line.id + ":speech";
    // About a fifth of a second a character at rate 1, and a little more: the longest a line is waited for.
    guard(line, Math.min(30000, 2000 + 220 * Array.from(line.text).length / (utterance.rate || 1)));
    window.speechSynthesis.cancel();
    window.speechSynthesis.speak(utterance);
  }

  function playFile(line) {
    if (!player) {
      player = new Audio();
      player.preload = "auto";
      player.addEventListener("ended", function () { if (saying) finished(saying, "audio"); });
      player.addEventListener("loadedmetadata", function () {
        if (saying && saying.audio && isFinite(player.duration)) guard(saying, player.duration * 1000 + 1500);
      });
      player.addEventListener("error", function () {
        // A file that cannot play (blocked, missing) is read aloud instead.
        if (saying && saying.audio && player.src === saying.audio) { var l = saying; l.audio = ""; speak(l); }
      });
    }
    player.src = line.audio;
    document.body.dataset.voicePlayed = line.id + ":audio";
    guard(line, 30000);
    var started = player.play();
    if (started && typeof started.catch === "function") {
      started.catch(function (err) {
        // Cut short by the next line or the toggle (AbortError): nothing to do; anything else: read it.
        if (saying === line && !(err && err.name === "AbortError")) { line.audio = ""; speak(line); }
      });
    }
  }

  function say(line) {
    saying = line;
    showState();
    tell(line, "playing");
    var got = arrived[line.id];
    if (got) {
      if (got.audio) line.audio = got.audio;
      if (got.failed || got.audio) line.pending = false;
    }
    if (line.audio) { playFile(line); return; }
    if (line.pending) {
      // The stage is rendering this line's voice: its audio comes on the push (butai:audio), or the
      // browser reads the line when it does not come in time.
      document.body.dataset.voiceWaiting = line.id;
      waitTimer = setTimeout(function () {
        waitTimer = null;
        if (saying === line && line.pending) { line.pending = false; speak(line); }
      }, PENDING_WAIT_MS);
      return;
    }
    speak(line);
  }

  function next() {
    if (saying || !queue.length || !on || !unlocked) return;
    say(queue[0]);
  }

  function enqueue(line) {
    if (queue.length && queue[queue.length - 1].turn !== line.turn) {
      // A new turn: what the last one had not said yet is not said any more.
      stopAll();
    }
    if (queue.some(function (l) { return l.id === line.id; })) return;
    queue.push(line);
    tell(line, "queued");
    next();
  }

  function lineOf(d) {
    return { id: str(d.id) || str(d.key), turn: str(d.turn), text: str(d.text), audio: audioUrl(str(d.audio)),
             pending: d.pending === true, voice: isObject(d.voice) ? d.voice : null };
  }

  document.addEventListener("butai:line", function (ev) {
    var d = isObject(ev.detail) ? ev.detail : null;
    if (!d) return;
    var line = lineOf(d);
    latest = line;
    // A line on the page when it opened is not read out; each new one is, once allowed, after the others.
    if (d.fresh === true && on && unlocked && line.text) enqueue(line);
  });

  // The line shown before this file started (app.js answers butai:voice-ready): the toggle reads it, nothing
  // else is done with it.
  document.addEventListener("butai:current", function (ev) {
    var d = isObject(ev.detail) ? ev.detail : null;
    if (d && !latest) latest = lineOf(d);
  });

  // A line's audio arrived after the line (rendered by the stage), or the stage could not render it.
  document.addEventListener("butai:audio", function (ev) {
    var d = isObject(ev.detail) ? ev.detail : null;
    if (!d || !str(d.id)) return;
    var id = str(d.id);
    var url = audioUrl(str(d.audio));
    arrived[id] = { audio: url, failed: d.failed === true };
    var update = function (line) {
      if (!line || line.id !== id || line.audio) return;
      if (url) line.audio = url;
      line.pending = false;
    };
    queue.forEach(update);
    update(latest);
    if (saying && saying.id === id && !waitTimer) return;   // already being read by the browser's voice
    if (saying && saying.id === id) {
      clearTimeout(waitTimer);
      waitTimer = null;
      delete document.body.dataset.voiceWaiting;
      if (saying.audio) playFile(saying); else speak(saying);
    }
  });

  function unlock() {
    if (unlocked) return;
    unlocked = true;
    showState();
    next();
  }
  ["pointerdown", "keydown", "touchend"].forEach(function (type) {
    document.addEventListener(type, unlock, { capture: true, passive: true });
  });

  toggle.addEventListener("click", function () {
    unlock();
    on = !on;
    save();
    stopAll();
    showState();
    if (on && latest && latest.text) {
      queue = [latest];
      say(latest);
    }
  });

  toggle.hidden = false;
  showState();
  document.dispatchEvent(new CustomEvent("butai:voice-ready"));
})();
