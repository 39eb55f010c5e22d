/*
 * butai — the player's stage page.
 *
 * Security notes (the page runs under a strict CSP):
 *  - every piece of text from the API is put on the page with textContent /
 *    createElement only; nothing is ever parsed as HTML;
 *  - the player key is read from the URL fragment and only ever sent in an
 *    Authorization header, never in a URL.
 */
(function () {
  "use strict";

  var POLL_MS = 3000;          // polling interval while no push socket is subscribed
  var HIDDEN_POLL_MS = 15000;  // while the tab is in the background (it holds no socket)
  var BACKOFF_MAX_MS = 30000;  // ceiling for retries after network errors
  var PUSH_RETRY_MS = 1000;    // the socket is tried again after this (doubling, with jitter) …
  var PUSH_RETRY_MAX_MS = 30000;  // … up to this
  var SUBSCRIBE_TIMEOUT_MS = 10000;  // a socket not subscribed by then is closed and tried again
  var KEEPALIVE_MS = 540000;   // a ping after 9 silent minutes: API Gateway closes a socket idle for 10
  var MAX_CHARS = 1000;
  var LOG_LIMIT = 50;          // the stage's log window (GET /stages/{id} answers the last 50 entries)

  var MSG_BAD_URL = "舞台の URL が正しくありません。受け取った URL をそのまま開いてください。";
  var MSG_FORBIDDEN = "この舞台は開けません（鍵が違うか、舞台がありません）";
  var MSG_SENT = "送信しました。応答をお待ちください";
  var SEND_PREFIX = "送信できませんでした: ";

  function $(id) { return document.getElementById(id); }

  var els = {
    title: $("stage-title"),
    notice: $("notice"),
    noticeText: $("notice-text"),
    app: $("app"),
    connection: $("connection"),
    image: $("character-image"),
    portrait: $("portrait"),
    place: $("place-name"),
    cast: $("cast"),
    speechBox: $("speech"),
    notices: $("notices"),
    destinations: $("destinations"),
    ending: $("ending"),
    endingTitle: $("ending-title"),
    endingText: $("ending-text"),
    restart: $("restart"),
    endingLeave: $("ending-leave"),
    endingClosed: $("ending-closed"),
    addressee: $("addressee"),
    debug: $("debug"),
    debugBody: $("debug-body"),
    speaker: $("speaker-name"),
    speech: $("speech-text"),
    step: $("speech-step"),
    prev: $("speech-prev"),
    next: $("speech-next"),
    moveNotice: $("move-notice"),
    addresseeName: $("addressee-name"),
    addresseeClear: $("addressee-clear"),
    logJump: $("log-jump"),
    logJumpText: $("log-jump-text"),
    below: $("below"),
    shell: $("shell"),
    log: $("log"),
    logRegion: $("log-region"),
    form: $("reply-form"),
    text: $("reply-text"),
    submit: $("reply-submit"),
    count: $("reply-count"),
    note: $("reply-note"),
    error: $("error")
  };

  // ---------------------------------------------------------------- config

  function parseConfig() {
    var params = new URLSearchParams(location.hash.slice(1));
    var stage = (params.get("stage") || "").trim();
    var key = (params.get("key") || "").trim();
    if (!stage || !key) return null;

    var base = location.origin;
    var api = (params.get("api") || "").trim();
    if (api) {
      var u;
      try { u = new URL(api, location.href); } catch (e) { return null; }
      // Only a path on the page's own origin: the player key must never travel to another origin
      // (the Content-Security-Policy's connect-src 'self' would also block it).
      if (u.origin !== location.origin) return null;
      base = u.origin + u.pathname;
    }
    base = base.replace(/\/+$/, "");
    var stageUrl = base + "/stages/" + encodeURIComponent(stage);
    // The push socket on the same origin (CloudFront sends /push to the WebSocket API in the cloud).
    var pushUrl = new URL(base + "/push");
    pushUrl.protocol = pushUrl.protocol === "https:" ? "wss:" : "ws:";
    return {
      stage: stage,
      stageUrl: stageUrl,
      pushUrl: pushUrl.href,
      replyUrl: stageUrl + "/reply",
      // development menu: only when the fragment asks for it; no key in this URL
      debugUrl: params.get("debug") === "1" ? stageUrl + "/debug?limit=1" : null,
      key: key
    };
  }

  var config = parseConfig();

  function showNotice(message, state) {
    els.noticeText.textContent = message;
    els.notice.hidden = false;
    els.app.hidden = true;
    document.body.dataset.state = state;
  }

  if (!config) {
    showNotice(MSG_BAD_URL, "invalid");
    return;
  }

  els.app.hidden = false;

  function authHeaders(extra) {
    var h = { "Authorization": "Bearer " + config.key, "Accept": "application/json" };
    if (extra) for (var k in extra) h[k] = extra[k];
    return h;
  }

  function readErrorMessage(res) {
    return res.json().then(function (body) {
      var err = body && body.error;
      if (err && typeof err.message === "string" && err.message) return err.message;
      return "HTTP " + res.status;
    }, function () {
      return "HTTP " + res.status;
    });
  }

  // ------------------------------------------------------------- rendering

  var lastVersion = null;
  var shownLog = [];          // the log entries of the view on the page, as the stage sent them
  var characterName = "";

  function resolveUrl(url) {
    if (typeof url !== "string" || !url) return "";
    try {
      var u = new URL(url, location.href);
      if (u.protocol !== "https:" && u.protocol !== "http:" && u.protocol !== "data:") return "";
      return u.href;
    } catch (e) {
      return "";
    }
  }

  // Image: change src only when the primary URL changes; on error, fall back once.
  // One "slot" per <img>: the big single-character picture and each cast member.
  function imageSlot(img) {
    var slot = { img: img, primary: null, fallback: "", usingFallback: false };
    img.addEventListener("error", function () {
      if (!slot.usingFallback && slot.fallback && slot.fallback !== slot.primary) {
        slot.usingFallback = true;
        img.src = slot.fallback;
        return;
      }
      img.classList.add("is-broken");
    });
    img.addEventListener("load", function () {
      img.classList.remove("is-broken");
    });
    return slot;
  }

  function setSlotImage(slot, primaryRaw, fallbackRaw) {
    var img = slot.img;
    var primary = resolveUrl(primaryRaw);
    var fallback = resolveUrl(fallbackRaw);
    if (primary === slot.primary) {
      // Same picture; only follow a changed fallback if we are already showing it.
      if (slot.usingFallback && fallback && fallback !== slot.fallback) {
        slot.fallback = fallback;
        img.src = fallback;
      } else {
        slot.fallback = fallback;
      }
      return;
    }
    slot.primary = primary;
    slot.fallback = fallback;
    slot.usingFallback = false;
    img.classList.remove("is-broken");
    if (primary) {
      img.src = primary;
    } else if (fallback) {
      slot.usingFallback = true;
      img.src = fallback;
    } else {
      img.removeAttribute("src");
      img.classList.add("is-broken");
    }
  }

  var image = imageSlot(els.image);

  function setImage(primaryRaw, fallbackRaw) {
    setSlotImage(image, primaryRaw, fallbackRaw);
  }

  function str(v) { return typeof v === "string" ? v : (v == null ? "" : String(v)); }

  // What a screen reader says for a picture: 「ひより（笑顔）」. Expression keys are
  // English ids, so each known one has a Japanese word; an unknown key is not
  // read out at all (the name alone) rather than spelled in English.
  var EXPRESSION_LABELS = {
    neutral: "ふつう",
    smile: "笑顔",
    troubled: "困り顔",
    surprised: "驚き",
    embarrassed: "照れ",
    determined: "決意",
    angry: "怒り"
  };

  function faceLabel(name, expression) {
    var label = Object.prototype.hasOwnProperty.call(EXPRESSION_LABELS, expression)
      ? EXPRESSION_LABELS[expression] : "";
    return label ? name + "（" + label + "）" : name;
  }
  function isObject(v) { return v !== null && typeof v === "object" && !Array.isArray(v); }

  // ---------------------------------------------------------------- bubble
  // The bubble shows the lines of the latest turn one at a time, in order: each with its speaker, whose
  // face (the portrait, or their card on a scenario stage) is the one the line was said with. New lines
  // step on by themselves after a reading time, or at once by tapping the bubble or 次へ; ‹ goes back.
  // A turn is the run of character lines since the last line of the player (or a notice). The log
  // keeps every line too, and it alone is the live region: the bubble is read by no screen reader twice.

  var READ_BASE_MS = 1200;     // a line stays this long, plus a little per character …
  var READ_PER_CHAR_MS = 80;
  var READ_MIN_MS = 2200;      // … between these bounds, before the next line of the turn comes up
  var READ_MAX_MS = 7000;

  var bubble = {
    lines: [],        // the turn's character entries, oldest first
    step: -1,         // which is shown
    auto: false,      // stepping on by time (until the player steps by hand)
    timer: null,
    seen: new Set(),  // ids already shown in the bubble (a line is new to the voice only once)
    opened: null,     // ids on the page when it opened: not read aloud (no autoplay on opening)
    held: null        // the line whose reading time is over but which the voice is still saying
  };
  // Lines the voice (voice.js) has queued or is saying: the bubble stays on such a line until it is said.
  var voiceBusy = new Set();
  var lastView = null;
  var currentData = {};

  function readMs(text) {
    return Math.min(READ_MAX_MS, Math.max(READ_MIN_MS, READ_BASE_MS + READ_PER_CHAR_MS * Array.from(text).length));
  }

  // The latest turn in the log: the character lines after the last player line or notice.
  function turnOf(log) {
    var end = -1;
    for (var i = log.length - 1; i >= 0; i--) {
      if (log[i] && log[i].role === "character") { end = i; break; }
    }
    if (end < 0) return { lines: [], answered: false };
    var begin = end;
    while (begin > 0 && log[begin - 1] && log[begin - 1].role === "character") begin -= 1;
    var answered = false;
    for (var j = end + 1; j < log.length; j++) if (log[j] && log[j].role === "player") answered = true;
    return { lines: log.slice(begin, end + 1), answered: answered };
  }

  function stopStepping() {
    clearTimeout(bubble.timer);
    bubble.timer = null;
  }

  function idsOf(lines) { return lines.map(function (e) { return String(e.id); }); }

  // A new view: the turn's lines against those in the bubble. A turn that grew while its last line was
  // shown steps on to the first new line; a new turn starts at its first line (at its last when the page
  // opens on a game under way: the player saw it before the reload).
  function renderBubble(log, current, firstView) {
    var turn = turnOf(log);
    var lines = turn.lines;
    if (!lines.length && str(current.text)) {
      // no line of the turn in the log window (an agent's old line): the current line alone
      lines = [{ id: "current", role: "character", speaker: current.speaker, text: current.text,
                 expression: current.expression, image_url: current.image_url,
                 fallback_image_url: current.fallback_image_url, audio: current.audio }];
    }
    if (firstView) bubble.opened = new Set(idsOf(lines));
    var before = idsOf(bubble.lines);
    var now = idsOf(lines);
    var shownId = bubble.step >= 0 ? before[bubble.step] : null;
    var lastBefore = before.length ? before[before.length - 1] : null;
    var at = lastBefore === null ? -1 : now.indexOf(lastBefore);
    bubble.lines = lines;
    els.speechBox.dataset.answered = turn.answered ? "true" : "false";
    if (!lines.length) {
      stopStepping();
      bubble.step = -1;
      showStep(false);
      return;
    }
    if (at >= 0) {
      // the same turn
      var wasAtEnd = bubble.step >= before.length - 1;
      if (now.length - 1 > at && wasAtEnd && voiceBusy.has(String(lastBefore))) {
        // a line came while the one shown is still being voiced: it waits for the voice (butai:voice done)
        stopStepping();
        bubble.step = at;
        bubble.auto = true;
        bubble.held = String(lastBefore);
        showStep(false);
      } else if (now.length - 1 > at && wasAtEnd) {
        goTo(at + 1, true);
      } else {
        var keep = shownId === null ? -1 : now.indexOf(shownId);
        bubble.step = keep >= 0 ? keep : now.length - 1;
        showStep(false);
        if (bubble.auto && !bubble.timer) scheduleStep();
      }
      return;
    }
    var underway = firstView && log.some(function (e) { return e && e.role === "player"; });
    goTo(underway ? lines.length - 1 : 0, true);
  }

  function goTo(index, auto) {
    stopStepping();
    bubble.held = null;
    bubble.step = Math.max(0, Math.min(index, bubble.lines.length - 1));
    bubble.auto = auto;
    showStep(true);
    scheduleStep();
  }

  function scheduleStep() {
    stopStepping();
    if (!bubble.auto || bubble.step >= bubble.lines.length - 1) return;
    var line = bubble.lines[bubble.step];
    bubble.timer = setTimeout(function () {
      bubble.timer = null;
      if (voiceBusy.has(String(line.id))) {
        bubble.held = String(line.id);    // steps on once the voice has said it (butai:voice done)
        return;
      }
      if (bubble.step < bubble.lines.length - 1) goTo(bubble.step + 1, true);
    }, readMs(str(line.text)));
  }

  document.addEventListener("butai:voice", function (ev) {
    var d = isObject(ev.detail) ? ev.detail : {};
    var id = str(d.id);
    if (!id) return;
    if (d.state === "done") voiceBusy.delete(id); else voiceBusy.add(id);
    if (d.state === "done" && bubble.held === id) {
      bubble.held = null;
      var shown = bubble.step >= 0 ? bubble.lines[bubble.step] : null;
      if (bubble.auto && shown && String(shown.id) === id && bubble.step < bubble.lines.length - 1) {
        goTo(bubble.step + 1, true);
      }
    }
  });

  function stepBy(delta) {
    var target = bubble.step + delta;
    if (target < 0 || target >= bubble.lines.length) return;
    goTo(target, false);
  }

  function speakerOf(entry) {
    return str(entry.speaker) || (entry.character != null && knownNames.get(str(entry.character))) || characterName;
  }

  // Shows the line at bubble.step: the text, who says it, their face; `moved`: the step changed.
  function showStep(moved) {
    var line = bubble.step >= 0 ? bubble.lines[bubble.step] : null;
    var count = bubble.lines.length;
    var last = bubble.step === count - 1;
    els.speechBox.dataset.step = String(bubble.step + 1);
    els.speechBox.dataset.steps = String(count);
    els.step.hidden = count < 2;
    els.step.textContent = (bubble.step + 1) + " / " + count;
    els.prev.hidden = count < 2;
    els.next.hidden = count < 2;
    els.prev.disabled = bubble.step <= 0;
    els.next.disabled = last;
    els.speechBox.classList.toggle("has-more", !!line && !last);

    var text = line ? str(line.text) : "";
    var speaker = line ? speakerOf(line) : "";
    els.speaker.textContent = speaker;
    els.speaker.hidden = !speaker;
    if (els.speech.textContent !== text) {
      els.speech.textContent = text;
      // restart the small "new line" animation
      els.speech.classList.remove("is-new");
      void els.speech.offsetWidth;
      if (text) els.speech.classList.add("is-new");
    }

    var speakerId = line && line.character != null ? str(line.character) : "";
    if (scene) {
      // On a scenario stage the bubble shows a line of someone present, or of the turn just played (after a
      // silent move the last speaker may have stayed behind).
      var present = speakerId ? castNames.has(speakerId) : false;
      if (!present) castNames.forEach(function (name) { if (name === speaker) present = true; });
      els.speechBox.hidden = !text || (!present && els.speechBox.dataset.answered === "true");
      // the speaker's card says who speaks, with the face of this line (the scene's faces once the turn is read)
      var speakingId = last ? str(scene.speaking) || speakerId : speakerId;
      markSpeaking(speakingId, last ? null : line);
    } else {
      els.speechBox.hidden = false;
      // the line's own face while the turn is read; the stage's current face on its last line
      var face = line && !last && str(line.image_url) ? line : currentData;
      var expression = str(face.expression);
      els.image.alt = faceLabel(characterName || speaker || "キャラクター", expression);
      els.image.dataset.expression = expression;
      setImage(face.image_url, face.fallback_image_url);
    }
    if (moved && line) announceLine(line);
  }

  // voice.js reads each line the bubble shows for the first time (not those on the page when it opened).
  // voice.js may start after the first line was announced (the scripts load apart; on a slow network the
  // stage's first answer can come before it): when it says it is ready, it is told the line shown now.
  var announced = null;
  function announceLine(line) {
    var id = String(line.id);
    var fresh = !bubble.seen.has(id) && !(bubble.opened && bubble.opened.has(id));
    bubble.seen.add(id);
    var first = bubble.lines.length ? String(bubble.lines[0].id) : id;
    announced = {
      id: id, turn: first, key: id + "|" + str(line.text), text: str(line.text), audio: str(line.audio),
      pending: line.audio_status === "pending" && !str(line.audio), voice: voiceOf(line), fresh: fresh };
    document.dispatchEvent(new CustomEvent("butai:line", { detail: announced }));
  }
  document.addEventListener("butai:voice-ready", function () {
    if (announced) document.dispatchEvent(new CustomEvent("butai:current", { detail: announced }));
  });

  // A line's own voice, rendered by the stage after the line was written, arrives on the push (or with a
  // later view): kept on the line, and handed to voice.js, which may be waiting for it.
  function audioArrived(id, audio, failed) {
    for (var i = 0; i < shownLog.length; i++) {
      var entry = shownLog[i];
      if (entry && String(entry.id) === id) {
        if (audio && !str(entry.audio)) entry.audio = audio;
        entry.audio_status = failed ? "failed" : null;
      }
    }
    document.dispatchEvent(new CustomEvent("butai:audio", { detail: { id: id, audio: audio, failed: failed } }));
  }

  function voiceOf(line) {
    var view = lastView || {};
    var sc = isObject(view.scene) ? view.scene : null;
    var id = line.character != null ? str(line.character) : "";
    if (sc && Array.isArray(sc.characters)) {
      for (var i = 0; i < sc.characters.length; i++) {
        var c = sc.characters[i];
        if (isObject(c) && (str(c.id) === id || str(c.name) === str(line.speaker)) && isObject(c.voice)) return c.voice;
      }
    }
    var stage = isObject(view.stage) ? view.stage : {};
    return isObject(stage.voice) ? stage.voice : null;
  }

  els.next.addEventListener("click", function () { stepBy(1); });
  els.prev.addEventListener("click", function () { stepBy(-1); });
  els.speech.addEventListener("click", function () { stepBy(1); });

  // ----------------------------------------------------------------- scene
  // Only on scenario stages (the view carries a `scene`): the place, everyone
  // present side by side, whom the player addresses, exits and notices.

  var scene = null;               // the latest view's scene, or null on agent stages
  var castNodes = new Map();      // character id -> { button, img, name, slot }
  var castNames = new Map();      // character id -> display name (present now)
  var knownNames = new Map();     // character id -> display name (everyone seen; for the log)
  var addressee = null;           // selected character id, or null
  var noticesKey = null;
  var destinationsKey = null;
  var sending = false;

  function createCastMember(id) {
    var button = document.createElement("button");
    button.type = "button";
    button.className = "cast-member";
    button.dataset.character = id;
    button.setAttribute("aria-pressed", "false");

    var frame = document.createElement("span");
    frame.className = "cast-frame";
    var img = document.createElement("img");
    img.className = "cast-image";
    img.width = 480;
    img.height = 600;
    img.decoding = "async";
    img.alt = "";
    frame.appendChild(img);

    var name = document.createElement("span");
    name.className = "cast-name";

    button.appendChild(frame);
    button.appendChild(name);
    button.addEventListener("click", function () {
      // a second tap keeps the choice (a tap is never silently undone): 取り消す in the banner undoes it
      if (addressee === id) nudgeAddressee();
      else setAddressee(id);
    });
    return { button: button, img: img, name: name, slot: imageSlot(img) };
  }

  function renderCast(characters, speaking) {
    var wanted = new Set();
    var order = [];
    castNames = new Map();
    characters.forEach(function (c) {
      if (!isObject(c)) return;
      var id = str(c.id);
      if (!id || wanted.has(id)) return;
      wanted.add(id);
      var name = str(c.name) || id;
      castNames.set(id, name);
      knownNames.set(id, name);
      order.push({ id: id, name: name, data: c });
    });

    castNodes.forEach(function (node, id) {
      if (!wanted.has(id)) {
        node.button.remove();
        castNodes.delete(id);
      }
    });

    var ref = els.cast.firstChild;
    order.forEach(function (item) {
      var node = castNodes.get(item.id);
      if (!node) {
        node = createCastMember(item.id);
        castNodes.set(item.id, node);
      }
      var c = item.data;
      if (node.name.textContent !== item.name) node.name.textContent = item.name;
      node.label = item.name;
      node.face = { expression: str(c.expression), image_url: c.image_url, fallback_image_url: c.fallback_image_url };
      if (c.responder === true) node.button.dataset.responder = "true";
      else delete node.button.dataset.responder;

      if (node.button === ref) {
        ref = ref.nextSibling;
      } else {
        els.cast.insertBefore(node.button, ref);
      }
    });
    els.cast.dataset.count = String(order.length);
    castOrder = order.map(function (item) { return item.id; });
    markSpeaking(speaking, null);
  }

  var castOrder = [];

  // Who speaks: the card's 「話し中」, the bubble's tail, and, while a turn's earlier line is shown, the face
  // that line was said with (`line`); every other card shows the scene's face.
  function markSpeaking(speaking, line) {
    var speakingIndex = castOrder.indexOf(speaking);
    castNodes.forEach(function (node, id) {
      var isSpeaking = id === speaking;
      var face = isSpeaking && line && str(line.image_url) && str(line.character) === id
        ? { expression: str(line.expression), image_url: line.image_url, fallback_image_url: line.fallback_image_url }
        : node.face;
      node.img.dataset.expression = face.expression;
      setSlotImage(node.slot, face.image_url, face.fallback_image_url);
      node.button.classList.toggle("speaking", isSpeaking);
      if (isSpeaking) node.button.setAttribute("aria-current", "true");
      else node.button.removeAttribute("aria-current");
      // the button's name is what is read: who, the face, and whether they are speaking
      // (the visible 「話し中」 badge is CSS, so it is spelled out here)
      var buttonLabel = faceLabel(node.label, face.expression);
      node.button.setAttribute("aria-label", isSpeaking ? "話し中 " + buttonLabel : buttonLabel);
    });
    setSpeechTail(speakingIndex, castOrder.length);
  }

  // Point the bubble's tail at whoever is speaking (twelfths of the width).
  var tailClass = "";
  function setSpeechTail(index, count) {
    var next = "";
    if (index >= 0 && count > 0) {
      var k = Math.min(11, Math.max(1, Math.round((index + 0.5) / count * 12)));
      next = "tail-" + k;
    }
    if (next === tailClass) return;
    if (tailClass) els.speechBox.classList.remove(tailClass);
    if (next) els.speechBox.classList.add(next);
    tailClass = next;
  }

  // Whom the next reply is for. The choice holds for one reply: it is cleared once that reply is sent (the
  // banner says so), and when the character leaves; 取り消す clears it before.
  function setAddressee(id) {
    var before = addressee;
    addressee = id && castNames.has(id) ? id : null;
    castNodes.forEach(function (node, cid) {
      var on = cid === addressee;
      node.button.classList.toggle("selected", on);
      node.button.setAttribute("aria-pressed", on ? "true" : "false");
    });
    els.addresseeName.textContent = addressee ? castNames.get(addressee) : "";
    els.addressee.classList.remove("is-nudged");
    els.addressee.hidden = !addressee;
    if (before !== addressee) queueFit();
  }

  function nudgeAddressee() {
    els.addressee.classList.remove("is-nudged");
    void els.addressee.offsetWidth;
    els.addressee.classList.add("is-nudged");
  }

  els.addresseeClear.addEventListener("click", function () {
    setAddressee(null);
    els.text.focus({ preventScroll: true });
  });

  function renderNotices(notices) {
    var items = [];
    (Array.isArray(notices) ? notices : []).forEach(function (n) {
      var text = isObject(n) ? str(n.text) : str(n);
      if (text) items.push({ kind: isObject(n) ? str(n.kind) : "", text: text });
    });
    var key = JSON.stringify(items);
    if (key === noticesKey) return;
    noticesKey = key;
    while (els.notices.firstChild) els.notices.removeChild(els.notices.firstChild);
    items.forEach(function (item) {
      var p = document.createElement("p");
      p.className = "scene-notice";
      if (item.kind) p.dataset.kind = item.kind;
      p.textContent = item.text;
      els.notices.appendChild(p);
    });
    els.notices.hidden = items.length === 0;
  }

  function renderDestinations(destinations) {
    var items = [];
    (Array.isArray(destinations) ? destinations : []).forEach(function (d) {
      if (!isObject(d)) return;
      var place = str(d.place);
      if (place) items.push({ place: place, name: str(d.name) || place });
    });
    var key = JSON.stringify(items);
    if (key === destinationsKey) return;
    destinationsKey = key;
    while (els.destinations.firstChild) els.destinations.removeChild(els.destinations.firstChild);
    if (items.length) {
      var label = document.createElement("span");
      label.className = "destinations-label";
      label.textContent = "行き先";
      els.destinations.appendChild(label);
    }
    items.forEach(function (item) {
      var button = document.createElement("button");
      button.type = "button";
      button.className = "destination";
      button.dataset.place = item.place;
      button.textContent = item.name + "へ行く";
      button.disabled = sending;
      button.addEventListener("click", function () {
        sendMove(item.place, item.name + "へ行く");
      });
      els.destinations.appendChild(button);
    });
    els.destinations.hidden = items.length === 0;
  }

  function renderScene(sc) {
    scene = sc;
    var on = !!sc;
    document.body.classList.toggle("has-scene", on);
    els.portrait.hidden = on;
    els.image.hidden = on;
    els.place.hidden = !on;
    els.cast.hidden = !on;
    if (!on) {
      renderCast([], "");
      clearMoveNotice();
      setAddressee(null);
      renderNotices([]);
      renderDestinations([]);
      renderEnding(null);
      return;
    }

    var placeName = str(sc.place_name) || str(sc.place);
    while (els.place.firstChild) els.place.removeChild(els.place.firstChild);
    var label = document.createElement("span");
    label.className = "place-label";
    label.textContent = "場所: ";
    var value = document.createElement("span");
    value.className = "place-value";
    value.textContent = placeName;
    els.place.appendChild(label);
    els.place.appendChild(value);
    els.place.dataset.place = str(sc.place);
    els.place.hidden = !placeName;

    renderCast(Array.isArray(sc.characters) ? sc.characters : [], str(sc.speaking));
    // keep the selection only while that character is still here
    setAddressee(addressee);
    renderNotices(sc.notices);
    renderDestinations(sc.destinations);
    var place = str(sc.place);
    if (shownPlace !== null && place !== shownPlace && !isObject(sc.ending) && !endedBefore) tellMove(placeName);
    shownPlace = place;
    endedBefore = isObject(sc.ending);
    renderEnding(isObject(sc.ending) ? sc.ending : null);
  }

  // A move is told, not only shown by the place label: where the player is now, and who is there.
  var shownPlace = null;
  var endedBefore = false;

  function joinNames(names) {
    if (names.length < 2) return names.join("");
    if (names.length === 2) return names[0] + "と" + names[1];
    return names.join("、");
  }

  function tellMove(placeName) {
    var names = [];
    castNames.forEach(function (name) { names.push(name); });
    els.moveNotice.textContent = placeName + "に移りました。" +
      (names.length ? "ここにいるのは" + joinNames(names) + "です。" : "ここには誰もいません。");
    els.moveNotice.hidden = false;
    els.moveNotice.classList.remove("is-new");
    void els.moveNotice.offsetWidth;
    els.moveNotice.classList.add("is-new");
    queueFit();
  }

  function clearMoveNotice() {
    if (els.moveNotice.hidden) return;
    els.moveNotice.hidden = true;
    els.moveNotice.textContent = "";
    queueFit();
  }

  // The game has ended: a card with 「もう一度」, which starts a new game.
  var restartText = "もう一度";

  // 「ここで終わる」 is the player's own choice, kept on this device for this game's ending (the stage knows
  // the game ended; a reload shows the card again, and, once chosen, without its two buttons' offer).
  var LEFT_KEY = "butai.left.";

  function endingId(ending) {
    // the ending's notice in the log names this game's end: a later game ends with another entry
    for (var i = shownLog.length - 1; i >= 0; i--) {
      var e = shownLog[i];
      if (e && e.role === "notice" && str(e.text) === str(ending.title)) return String(e.id);
    }
    return "turn-" + (scene ? String(scene.turn) : "") + "-" + str(ending.title);
  }

  function leftStored() {
    try { return window.localStorage.getItem(LEFT_KEY + config.stage); } catch (e) { return null; }
  }

  function storeLeft(value) {
    try {
      if (value) window.localStorage.setItem(LEFT_KEY + config.stage, value);
      else window.localStorage.removeItem(LEFT_KEY + config.stage);
    } catch (e) { /* private mode: the choice lasts for this visit */ }
  }

  var shownEnding = null;

  function renderEnding(ending) {
    var wasHidden = els.ending.hidden;
    // after an ending the composer offers only 「もう一度」 and a way out: no more lines to type
    els.form.hidden = !!ending;
    els.form.parentNode.hidden = !!ending;   // the reply card with it
    if (!ending) {
      if (shownEnding !== null) storeLeft(null);
      shownEnding = null;
      els.ending.hidden = true;
      els.endingClosed.hidden = true;
      els.endingLeave.hidden = false;
      if (!wasHidden) queueFit();
      return;
    }
    shownEnding = endingId(ending);
    var left = leftStored() === shownEnding;
    els.endingTitle.textContent = str(ending.title) || "おしまい";
    els.endingText.textContent = str(ending.text);
    els.endingText.hidden = !str(ending.text);
    restartText = str(ending.restart) || "もう一度";
    els.restart.textContent = restartText;
    els.restart.disabled = sending;
    els.endingLeave.hidden = left;
    els.endingClosed.hidden = !left;
    els.ending.hidden = false;
    if (wasHidden) queueFit();
    // the card is what the player can do now; focus waits until the button is enabled again
    if (wasHidden && !left) {
      focusRestart = true;
      if (!sending) takeRestartFocus();
    }
  }

  var focusRestart = false;

  function takeRestartFocus() {
    if (!focusRestart || els.ending.hidden || els.restart.disabled) return;
    focusRestart = false;
    els.restart.focus();
  }

  // ------------------------------------------------------------------- log

  var entryNodes = new Map(); // entry id -> li

  function formatTime(iso) {
    if (typeof iso !== "string" || !iso) return "";
    var d = new Date(iso);
    if (isNaN(d.getTime())) return "";
    var hh = String(d.getHours()).padStart(2, "0");
    var mm = String(d.getMinutes()).padStart(2, "0");
    return hh + ":" + mm;
  }

  function entryRole(entry) {
    if (entry.role === "player") return "role-player";
    if (entry.role === "notice") return "role-notice";
    return "role-character";
  }

  function createEntry(entry) {
    var li = document.createElement("li");
    li.dataset.id = entry.id;
    var role = entryRole(entry);
    li.className = "entry " + role;

    var text = document.createElement("p");
    text.className = "entry-text";

    if (role === "role-notice") {
      // a note from the stage itself: no speaker, no bubble
      li.appendChild(text);
      updateEntry(li, entry);
      return li;
    }

    var meta = document.createElement("div");
    meta.className = "entry-meta";
    var speaker = document.createElement("span");
    speaker.className = "entry-speaker";
    var time = document.createElement("time");
    time.className = "entry-time";
    // each new line is announced as 「speaker text」; the minute is for the eye only
    time.setAttribute("aria-hidden", "true");
    meta.appendChild(speaker);
    meta.appendChild(time);

    li.appendChild(meta);
    li.appendChild(text);
    updateEntry(li, entry);
    return li;
  }

  function updateEntry(li, entry) {
    var speaker = li.querySelector(".entry-speaker");
    var text = li.querySelector(".entry-text");
    var time = li.querySelector(".entry-time");
    if (text.textContent !== str(entry.text)) text.textContent = str(entry.text);
    if (!speaker) return;
    var speakerText = str(entry.speaker) || (entry.role === "player" ? "あなた"
      : (entry.character != null && knownNames.get(str(entry.character))) || characterName);
    if (speaker.textContent !== speakerText) speaker.textContent = speakerText;
    var t = formatTime(entry.created_at);
    if (time.textContent !== t) {
      time.textContent = t;
      if (t) time.dateTime = entry.created_at; else time.removeAttribute("datetime");
    }
  }

  function renderLog(log) {
    var entries = [];
    var wanted = new Set();
    for (var i = 0; i < log.length; i++) {
      var e = log[i];
      if (!e || e.id == null) continue;
      var id = String(e.id);
      if (wanted.has(id)) continue;
      wanted.add(id);
      entries.push({ id: id, role: e.role, speaker: e.speaker, character: e.character,
                     text: e.text, created_at: e.created_at });
    }

    // drop entries that fell off the server's window
    entryNodes.forEach(function (node, id) {
      if (!wanted.has(id)) {
        node.remove();
        entryNodes.delete(id);
      }
    });

    var region = els.logRegion;
    var added = 0;
    var ref = els.log.firstChild;
    entries.forEach(function (entry) {
      var node = entryNodes.get(entry.id);
      if (node && !node.classList.contains(entryRole(entry))) {
        // the role changed: build it again rather than patch the layout
        var fresh = createEntry(entry);
        if (ref === node) ref = fresh;
        node.replaceWith(fresh);
        entryNodes.set(entry.id, fresh);
        node = fresh;
      } else if (!node) {
        node = createEntry(entry);
        entryNodes.set(entry.id, node);
        added += 1;
      } else {
        updateEntry(node, entry);
      }
      if (node === ref) {
        ref = ref.nextSibling;
      } else {
        els.log.insertBefore(node, ref);
      }
    });

    if (added) {
      if (logFollowing) pinLog();
      else showJump(added);
      answerArrived(entries);
    }
  }

  // The log follows its newest entry, unless the player has scrolled back to read older ones: then the
  // new ones wait below, and a 「新しい発言」 button brings the log down to them. On opening (a reload too)
  // it stands at the newest entry, and stays there while the layout settles around it.
  var logFollowing = true;
  var unseen = 0;
  var FOLLOW_SLACK = 24;

  function logAtEnd() {
    var r = els.logRegion;
    return r.scrollHeight - r.scrollTop - r.clientHeight < FOLLOW_SLACK;
  }

  var pinnedAt = 0;            // where the page last put the log's scroll (its end)

  function pinLog() {
    var r = els.logRegion;
    r.scrollTop = r.scrollHeight;
    pinnedAt = r.scrollTop;
  }

  function showJump(added) {
    unseen += added;
    els.logJumpText.textContent = "新しい発言 " + unseen + "件";
    els.logJump.hidden = false;
  }

  function hideJump() {
    unseen = 0;
    els.logJump.hidden = true;
  }

  function setFollowing(on) {
    logFollowing = on;
    els.logRegion.dataset.following = on ? "true" : "false";
    if (on) hideJump();
  }

  // Only the player scrolls the log up: a scroll event that finds it where the page put it (the box changed
  // size under it before the page pinned it again) leaves it following, and pins it.
  els.logRegion.addEventListener("scroll", function () {
    var stayed = logFollowing && els.logRegion.scrollTop >= pinnedAt - 1;
    setFollowing(logAtEnd() || stayed);
    if (stayed && !logAtEnd()) pinLog();
  }, { passive: true });

  els.logJump.addEventListener("click", function () {
    setFollowing(true);
    pinLog();
    els.logRegion.focus({ preventScroll: true });
  });

  if (typeof ResizeObserver === "function") {
    // the log's box changes (the keyboard, a banner, faces fitted): a following log stays at its end
    new ResizeObserver(function () { if (logFollowing) pinLog(); }).observe(els.logRegion);
    new ResizeObserver(function () { if (logFollowing) pinLog(); }).observe(els.log);
  }

  function render(data) {
    var stage = data.stage || {};
    characterName = str(stage.character_name);
    var sc = isObject(data.scene) ? data.scene : null;
    var firstView = lastView === null;
    lastView = data;
    currentData = isObject(data.current) ? data.current : {};

    // a scenario stage shows its scenario's display title; an agent stage, its character
    var title = characterName || str(stage.name) || "舞台";
    if (sc) title = str(stage.title) || str(stage.name) || characterName || "舞台";
    els.title.textContent = title;
    document.title = title + " — 舞台";

    shownLog = Array.isArray(data.log) ? data.log : [];
    renderScene(sc);
    renderLog(shownLog);
    renderBubble(shownLog, currentData, firstView);

    var version = data.version == null ? "" : String(data.version);
    lastVersion = version;
    document.body.dataset.version = lastVersion;
    announceFromNowOn();
    document.body.dataset.state = "ready";
    queueFit();
    refreshDebug();
    // voice.js (the 読み上げ toggle) listens for each rendered view and each line the bubble shows
    document.dispatchEvent(new CustomEvent("butai:view", { detail: data }));
    shownLog.forEach(function (entry) {
      if (entry && entry.role === "character" && (str(entry.audio) || entry.audio_status === "failed")) {
        document.dispatchEvent(new CustomEvent("butai:audio", { detail: {
          id: String(entry.id), audio: str(entry.audio), failed: entry.audio_status === "failed" } }));
      }
    });
  }

  // ---------------------------------------------------------------- layout
  // The shell is as tall as the visible screen (visualViewport: the on-screen keyboard takes its share), so
  // nothing lies over anything: the header, the stage (faces and the bubble), the log and the composer
  // share it, and the log takes what is left. The faces are sized to leave the log room for its newest
  // lines; where even the smallest faces would not leave it that, the cards are names only, and on a very
  // short screen the header and headings step back as well.
  var CARD_MAX = 220, CARD_CHROME = 16, CAST_PADDING = 24, CAST_GAP = 10;   // the cast's sizes in style.css
  var FACE_MIN = 72;           // a smaller face is not worth the room: names only
  var FACE_MAX = 300;
  var LOG_MIN = 72;            // the log keeps at least its newest entry in view …
  var LOG_FLOOR = 48;          // the least the bubble leaves the log (its newest entry, when that is larger)
  var LOG_SHARE = 0.17;        // … or this share of the screen, whichever is more
  var fitQueued = false;

  function screenHeight() {
    var vv = window.visualViewport;
    return Math.max(1, Math.round(vv ? vv.height : window.innerHeight));
  }

  function queueFit() {
    if (fitQueued) return;
    fitQueued = true;
    requestAnimationFrame(function () {
      fitQueued = false;
      fitLayout();
    });
  }

  function faceWidthLimit() {
    // the faces are drawn 480×600: as tall as their cards' width allows
    if (!scene) return els.portrait.clientWidth / 0.8;
    var count = castOrder.length;
    if (!count) return 0;
    if (count === 1) return Math.min(els.cast.clientWidth * 0.7, 320) / 0.8;
    // from the row's width, not the cards' (their widths are mid-transition while the fitting measures)
    var card = Math.min(CARD_MAX, (els.cast.clientWidth - CAST_PADDING - CAST_GAP * (count - 1)) / count);
    return Math.max(0, card - CARD_CHROME) / 0.8;
  }

  var BUBBLE_MIN = 60;         // the bubble's text keeps two lines at least (a longer line scrolls in it)

  function fitLayout() {
    var h = screenHeight();
    var root = document.documentElement;
    var body = document.body;
    root.style.setProperty("--app-h", h + "px");
    root.style.removeProperty("--bubble-max");
    body.dataset.room = h < 440 ? "tiny" : h < 620 ? "short" : "tall";
    // the log keeps its newest entry whole (within reason), and a share of a tall screen
    var newest = els.log.lastElementChild;
    var need = newest ? Math.min(newest.offsetHeight + 16, Math.round(h * 0.35)) : 0;
    var want = Math.max(LOG_MIN, need, Math.round(h * LOG_SHARE));
    // measure what the log would have with no faces at all
    body.dataset.faces = "measure";
    var spare = els.logRegion.clientHeight;
    body.dataset.faces = "on";
    var byWidth = body.dataset.room === "tiny" ? 0 : faceWidthLimit();
    var face = Math.floor(Math.min(FACE_MAX, byWidth, spare - want));
    if (face >= FACE_MIN) {
      root.style.setProperty("--face-h", face + "px");
    } else {
      body.dataset.faces = "off";
      // still short of room: a long line scrolls inside a lower bubble
      // (the bubble gives way to the log's newest entry, not to its share of the screen)
      var missing = Math.max(LOG_FLOOR, need) - els.logRegion.clientHeight;
      var text = els.speech;
      if (missing > 0 && !els.speechBox.hidden && text.clientHeight > BUBBLE_MIN) {
        root.style.setProperty("--bubble-max", Math.max(BUBBLE_MIN, text.clientHeight - missing) + "px");
      }
    }
    if (logFollowing) pinLog();
  }

  if (window.visualViewport) window.visualViewport.addEventListener("resize", queueFit);
  window.addEventListener("resize", queueFit);
  if (typeof ResizeObserver === "function") {
    // what shares the screen with the log changed size: a longer line, a banner, a growing text box
    var sharers = new ResizeObserver(function () { queueFit(); });
    [els.speechBox, els.form.closest(".reply-card"), els.ending, els.place, els.moveNotice]
      .forEach(function (el) { sharers.observe(el); });
  }

  // 「送信しました…」 stays until the answer is there: an entry from someone else than the player that
  // was not on the page when the reply was sent.
  var awaiting = null;   // ids on the page when the reply was sent

  function awaitAnswer(replyId) {
    els.note.textContent = MSG_SENT;
    els.note.hidden = false;
    awaiting = new Set(entryNodes.keys());
    if (replyId) awaiting.add(replyId);
  }

  function answerArrived(entries) {
    if (!awaiting) return;
    for (var i = 0; i < entries.length; i++) {
      if (!awaiting.has(entries[i].id) && entries[i].role !== "player") {
        awaiting = null;
        els.note.hidden = true;
        return;
      }
    }
  }

  // The log turns polite only after the first view is on the page, so opening
  // the page does not read out the whole history; every later line is read.
  function announceFromNowOn() {
    if (els.logRegion.getAttribute("aria-live") === "polite") return;
    setTimeout(function () { els.logRegion.setAttribute("aria-live", "polite"); }, 0);
  }

  // A reply's answer on a scenario stage: shown at once. The poll keeps its
  // own ETag (the reply's is not that of a GET); answers to polls sent before
  // this view arrived are dropped, since they may be older than it.
  var viewEpoch = 0;

  function renderView(view) {
    viewEpoch += 1;
    render(view);
  }

  // ------------------------------------------------------------ debug view

  var debugState = { enabled: !!config.debugUrl, inFlight: false, queued: false };

  function refreshDebug() {
    if (!debugState.enabled || stopped) return;
    if (debugState.inFlight) { debugState.queued = true; return; }
    debugState.inFlight = true;
    debugState.queued = false;
    fetch(config.debugUrl, {
      method: "GET",
      headers: authHeaders(),
      cache: "no-store",
      credentials: "omit",
      referrerPolicy: "no-referrer"
    }).then(function (res) {
      if (res.status === 401 || res.status === 403 || res.status === 404) {
        debugState.enabled = false;
        els.debug.hidden = true;
        els.below.hidden = true;
        return;
      }
      if (!res.ok) return;
      return res.json().then(function (body) {
        var turns = isObject(body) && Array.isArray(body.turns) ? body.turns : [];
        var turn = turns.length ? turns[turns.length - 1] : null;
        renderDebug(isObject(turn) ? turn : null);
        els.debug.hidden = false;
        els.below.hidden = false;
      });
    }).catch(function () {
      // the development menu never disturbs the page
    }).then(function () {
      debugState.inFlight = false;
      if (debugState.queued && debugState.enabled) refreshDebug();
    });
  }

  function el(tag, className, text) {
    var node = document.createElement(tag);
    if (className) node.className = className;
    if (text != null) node.textContent = text;
    return node;
  }

  function present(v) {
    if (v == null || v === "") return false;
    if (Array.isArray(v)) return v.length > 0;
    if (isObject(v)) return Object.keys(v).length > 0;
    return true;
  }

  function fmt(v) {
    if (v == null) return "—";
    if (typeof v === "number") return String(Math.round(v * 1000) / 1000);
    if (typeof v === "string") return v;
    if (typeof v === "boolean") return v ? "true" : "false";
    try { return JSON.stringify(v); } catch (e) { return String(v); }
  }

  function debugSection(parent, title) {
    var section = el("section", "debug-section");
    section.appendChild(el("h3", "debug-heading", title));
    parent.appendChild(section);
    return section;
  }

  function debugPairs(section, pairs) {
    var dl = el("dl", "debug-pairs");
    pairs.forEach(function (pair) {
      if (!present(pair[1]) && !pair[2]) return;
      dl.appendChild(el("dt", null, pair[0]));
      var dd = el("dd", pair[3] || null, fmt(pair[1]));
      dl.appendChild(dd);
    });
    if (dl.firstChild) section.appendChild(dl);
    return dl;
  }

  function tokenList(list) {
    if (!Array.isArray(list)) return [];
    return list.map(function (x) {
      if (isObject(x)) {
        var token = str(x.token);
        var input = x.input == null ? "" : str(x.input);
        return input ? token + " (" + input + ")" : token;
      }
      return str(x);
    }).filter(Boolean);
  }

  // Where the turn was played (TurnRecord.place_before), and where it left the player when it moved them.
  function placeOf(turn, interp) {
    var before = turn.place_before != null ? str(turn.place_before) : (interp.place != null ? str(interp.place) : "");
    var after = turn.place_after != null ? str(turn.place_after) : "";
    if (after && after !== before) return before ? before + " → " + after : after;
    return before || null;
  }

  function renderDebug(turn) {
    var root = document.createDocumentFragment();
    if (!turn) {
      root.appendChild(el("p", "debug-empty", "まだ記録されたターンはありません"));
      els.debugBody.replaceChildren(root);
      return;
    }
    var interp = isObject(turn.interpretation) ? turn.interpretation : {};
    var backend = isObject(interp.backend) ? interp.backend : {};
    var narrowing = isObject(interp.narrowing) ? interp.narrowing : {};
    var scores = isObject(backend.scores) ? backend.scores : {};
    var chosenToken = str(interp.token) || str(backend.choice);

    // input
    var s = debugSection(root, "入力");
    var addr = isObject(interp.addressee) ? interp.addressee : null;
    debugPairs(s, [
      ["入力文", turn.text, true],
      ["宛先 (to)", turn.to, true],
      ["宛先の判定", addr ? [str(addr.character) || "—", str(addr.how)].filter(Boolean).join(" / ") : null],
      ["場所", placeOf(turn, interp)],
      ["ターン", turn.turn]
    ]);

    // candidates, with narrowing and the model's scores
    var narrowedAway = new Map();
    [["addressee", "宛先"], ["words", "語"]].forEach(function (pair) {
      (Array.isArray(narrowing[pair[0]]) ? narrowing[pair[0]] : []).forEach(function (x) {
        var t = isObject(x) ? str(x.token) : str(x);
        if (t) narrowedAway.set(t, pair[1]);
      });
    });
    var candidates = Array.isArray(interp.candidates) ? interp.candidates : [];
    s = debugSection(root, "候補 (" + candidates.length + ")");
    if (candidates.length) {
      var wrap = el("div", "debug-table-wrap");
      var table = el("table", "debug-table");
      var head = el("tr");
      ["token", "input", "label", "score"].forEach(function (h) { head.appendChild(el("th", null, h)); });
      var thead = el("thead");
      thead.appendChild(head);
      table.appendChild(thead);
      var tbody = el("tbody");
      candidates.forEach(function (c) {
        if (!isObject(c)) return;
        var token = str(c.token);
        var row = el("tr");
        if (token && token === chosenToken) row.className = "is-chosen";
        else if (narrowedAway.has(token)) row.className = "is-narrowed";
        row.appendChild(el("td", "debug-token", token));
        row.appendChild(el("td", null, str(c.input)));
        var labelCell = el("td", null, str(c.label));
        if (narrowedAway.has(token)) labelCell.appendChild(el("span", "debug-tag", "除外: " + narrowedAway.get(token)));
        row.appendChild(labelCell);
        row.appendChild(el("td", "debug-num", token in scores ? fmt(scores[token]) : ""));
        tbody.appendChild(row);
      });
      table.appendChild(tbody);
      wrap.appendChild(table);
      s.appendChild(wrap);
    } else {
      s.appendChild(el("p", "debug-empty", "なし"));
    }

    // narrowing
    var byAddressee = tokenList(narrowing.addressee);
    var byWords = tokenList(narrowing.words);
    s = debugSection(root, "絞り込み");
    debugPairs(s, [
      ["宛先で除外", byAddressee.length ? byAddressee.join(", ") : "なし", true],
      ["語で除外", byWords.length ? byWords.join(", ") : "なし", true],
      ["提示", Array.isArray(interp.offered) ? interp.offered.join(", ") : null]
    ]);

    // the model
    var scoreText = Object.keys(scores).sort(function (a, b) {
      return (Number(scores[b]) || 0) - (Number(scores[a]) || 0);
    }).map(function (k) { return k + " " + fmt(scores[k]); }).join(" · ");
    s = debugSection(root, "モデル");
    debugPairs(s, [
      ["名前", backend.name, true],
      ["選択", backend.choice, true],
      ["入力", backend.input],
      ["回答", backend.answer],
      ["スコア", scoreText],
      ["エラー", backend.error, false, "debug-error"],
      ["詳細", backend.detail],
      // the model server's circuit breaker: open means the model was not asked (docs/interpretation.md)
      ["遮断器", backend.circuit]
    ]);

    // the result
    s = debugSection(root, "結果");
    debugPairs(s, [
      ["規則", interp.rule, true],
      ["最終入力", turn.input != null ? turn.input : interp.input, true],
      ["発火した台詞", Array.isArray(turn.lines) ? (turn.lines.length ? turn.lines.map(str).join(", ") : "なし") : null]
    ]);

    // free conversation
    if ("free_talk" in turn) {
      s = debugSection(root, "自由会話");
      var ft = turn.free_talk;
      if (isObject(ft)) {
        var source = str(ft.source);
        debugPairs(s, [
          ["話者", ft.speaker],
          ["出どころ", source === "model" ? "モデル (model)" : source === "fallback" ? "フォールバック (fallback)" : source, true],
          ["理由", ft.reason],
          ["フォールバック", ft.fallback_id],
          ["台詞", ft.text],
          ["表情 (判定)", isObject(ft.judgment) ? str(ft.judgment.expression) + " · " + str(ft.judgment.judge) +
            (ft.judgment.error ? " · " + str(ft.judgment.error) : "") : null]
        ]);
      } else {
        s.appendChild(el("p", "debug-empty", "なし"));
      }
    }

    // errors
    var errors = (Array.isArray(turn.errors) ? turn.errors : []).map(fmt);
    if (present(interp.error) && errors.indexOf(str(interp.error)) < 0 && !present(backend.error)) errors.push(fmt(interp.error));
    s = debugSection(root, "エラー");
    if (errors.length) {
      var ul = el("ul", "debug-errors");
      errors.forEach(function (e) { ul.appendChild(el("li", null, e)); });
      s.appendChild(ul);
    } else {
      s.appendChild(el("p", "debug-empty", "なし"));
    }

    // timings
    var ms = isObject(turn.ms) ? turn.ms : (isObject(interp.ms) ? interp.ms : null);
    if (ms && Object.keys(ms).length) {
      s = debugSection(root, "時間 (ms)");
      var dl = el("dl", "debug-pairs debug-ms");
      Object.keys(ms).forEach(function (k) {
        dl.appendChild(el("dt", null, k));
        dl.appendChild(el("dd", "debug-num", fmt(ms[k])));
      });
      s.appendChild(dl);
    }

    els.debugBody.replaceChildren(root);
  }

  // --------------------------------------------------------------- polling
  // The fallback, and each subscription's catch-up: while no push socket is subscribed (it cannot
  // connect, it dropped, the tab is hidden) the page polls with If-None-Match, backing off on errors.

  var etag = null;
  var timer = null;
  var inFlight = false;
  var pollQueued = false;
  var stopped = false;
  var failures = 0;

  function setConnectionProblem(on) {
    els.connection.hidden = !on;
  }

  function schedule(ms) {
    if (stopped) return;
    clearTimeout(timer);
    // Pushed: no polling, but for a poll asked for meanwhile (a catch-up).
    if (push.live && !pollQueued) return;
    timer = setTimeout(poll, ms);
  }

  function nextDelay() {
    if (failures > 0) {
      return Math.min(POLL_MS * Math.pow(1.6, failures), BACKOFF_MAX_MS);
    }
    return document.hidden ? HIDDEN_POLL_MS : POLL_MS;
  }

  function pollNow() {
    if (stopped) return;
    if (inFlight) { pollQueued = true; return; }
    clearTimeout(timer);
    poll();
  }

  function stop(message) {
    stopped = true;
    clearTimeout(timer);
    closePush();
    showNotice(message, "forbidden");
  }

  function poll() {
    if (stopped || inFlight) return;
    inFlight = true;
    pollQueued = false;
    var epoch = viewEpoch;

    var headers = authHeaders(etag ? { "If-None-Match": etag } : null);
    fetch(config.stageUrl, {
      method: "GET",
      headers: headers,
      cache: "no-store",
      credentials: "omit",
      referrerPolicy: "no-referrer"
    }).then(function (res) {
      if (res.status === 304) return { ok: true };
      if (res.status === 401 || res.status === 403 || res.status === 404) {
        return { fatal: true };
      }
      if (!res.ok) return { ok: false };
      var newTag = res.headers.get("ETag");
      return res.json().then(function (data) {
        if (!data || typeof data !== "object") return { ok: false };
        if (epoch !== viewEpoch) {
          // a reply's or a push's view was shown while this was under way: it may be the newer one
          pollQueued = true;
          return { ok: true };
        }
        var version = data.version == null ? "" : String(data.version);
        if (lastVersion === null || version !== lastVersion || !version) render(data);
        etag = newTag || null;
        return { ok: true };
      });
    }).catch(function () {
      return { ok: false };
    }).then(function (result) {
      inFlight = false;
      if (result.fatal) { stop(MSG_FORBIDDEN); return; }
      if (result.ok) {
        failures = 0;
        setConnectionProblem(false);
      } else {
        failures += 1;
        setConnectionProblem(true);
      }
      schedule(pollQueued && result.ok ? 0 : nextDelay());
    });
  }

  // ------------------------------------------------------------------ push
  // The stage pushes every change over a WebSocket on the page's own origin (/push): the page subscribes
  // with its key, and each change arrives as the view a GET would answer with only the log entries the
  // change added (or, when even those do not fit in a message, as news to fetch the view). After every
  // subscription one conditional GET catches up on what was written before it held, so a reconnect
  // misses nothing; a view already shown (same version) is not shown again. A hidden tab holds no socket.

  var push = { socket: null, live: false, failures: 0, retry: null, refused: false, keepalive: null };

  function keepAlive(socket) {
    clearTimeout(push.keepalive);
    push.keepalive = setTimeout(function () {
      if (push.socket !== socket || !push.live) return;
      socket.send(JSON.stringify({ action: "ping" }));
      keepAlive(socket);
    }, KEEPALIVE_MS);
  }

  function connectPush() {
    if (typeof window.WebSocket !== "function" || stopped || push.refused || push.socket || document.hidden) return;
    clearTimeout(push.retry);
    var socket;
    try {
      socket = new WebSocket(config.pushUrl);
    } catch (e) {
      pushLost(null);
      return;
    }
    push.socket = socket;
    var waiting = setTimeout(function () { socket.close(); }, SUBSCRIBE_TIMEOUT_MS);
    socket.addEventListener("open", function () {
      socket.send(JSON.stringify({ action: "subscribe", stage: config.stage, key: config.key }));
    });
    socket.addEventListener("message", function (ev) {
      if (push.socket !== socket) return;
      var msg;
      try { msg = JSON.parse(ev.data); } catch (e) { return; }
      if (!isObject(msg)) return;
      keepAlive(socket);
      if (msg.type === "subscribed") {
        clearTimeout(waiting);
        pushLive();
      } else if (msg.type === "view" && isObject(msg.view)) {
        showPushed(msg.view, msg.after == null ? null : str(msg.after));
      } else if (msg.type === "changed") {
        if (str(msg.version) !== lastVersion) pollNow();
      } else if (msg.type === "audio" && Array.isArray(msg.lines)) {
        msg.lines.forEach(function (l) {
          if (isObject(l) && l.id != null) audioArrived(String(l.id), str(l.audio), l.status === "failed");
        });
      } else if (msg.type === "error") {
        // A refused key stays refused (the poll's own answer shows the notice); a busy stage is tried again.
        if (!isObject(msg.error) || msg.error.code !== "unavailable") push.refused = true;
        socket.close();
      }
    });
    socket.addEventListener("close", function () {
      clearTimeout(waiting);
      pushLost(socket);
    });
  }

  function pushLive() {
    push.live = true;
    push.failures = 0;
    document.body.dataset.push = "live";
    clearTimeout(timer);
    pollNow();   // the catch-up: anything written before the subscription held
  }

  function logIndex(id) {
    for (var i = shownLog.length - 1; i >= 0; i--) if (String(shownLog[i].id) === id) return i;
    return -1;
  }

  // A push's log holds the entries its change added, `after` the entry before them: they follow that entry
  // on the page; a page without it missed a change and fetches the view. A push older than what a poll
  // already showed (its newest entry is on the page, with others after it) is not shown.
  function showPushed(view, after) {
    var version = view.version == null ? "" : String(view.version);
    if (version && version === lastVersion) return;
    var added = Array.isArray(view.log) ? view.log : [];
    var newest = added.length ? str(added[added.length - 1].id) : after;
    if (newest) {
      var seen = logIndex(newest);
      if (seen >= 0 && seen < shownLog.length - 1) return;
    }
    if (after !== null) {
      var at = logIndex(after);
      if (at < 0 || !Array.isArray(view.log)) {
        pollNow();
        return;
      }
      var whole = {};
      for (var k in view) whole[k] = view[k];
      whole.log = shownLog.slice(0, at + 1).concat(view.log).slice(-LOG_LIMIT);
      view = whole;
    }
    if (version) etag = '"' + version + '"';   // a later poll answers 304 for what is shown
    renderView(view);
  }

  function pushLost(socket) {
    if (socket && push.socket !== socket) return;
    clearTimeout(push.keepalive);
    var wasLive = push.live;
    push.socket = null;
    push.live = false;
    document.body.dataset.push = "off";
    if (stopped) return;
    // Polling until a socket is subscribed again (a socket that never held leaves the polls' own pace alone).
    if (wasLive && !inFlight) schedule(nextDelay());
    if (document.hidden || push.refused) return;
    if (!wasLive) push.failures += 1;
    var delay = Math.min(PUSH_RETRY_MS * Math.pow(2, push.failures), PUSH_RETRY_MAX_MS);
    clearTimeout(push.retry);
    push.retry = setTimeout(connectPush, delay * (0.5 + Math.random() / 2));
  }

  function closePush() {
    clearTimeout(push.retry);
    clearTimeout(push.keepalive);
    var socket = push.socket;
    if (!socket) return;
    push.socket = null;
    push.live = false;
    document.body.dataset.push = "off";
    socket.close(1000);
    if (!stopped && !inFlight) schedule(nextDelay());
  }

  document.addEventListener("visibilitychange", function () {
    if (document.hidden) {
      closePush();
      return;
    }
    connectPush();
    pollNow();
  });
  window.addEventListener("online", function () {
    connectPush();
    pollNow();
  });
  window.addEventListener("hashchange", function () { location.reload(); });

  // ------------------------------------------------------------ reply form

  function countChars(s) { return Array.from(s).length; }

  function updateCount() {
    var n = countChars(els.text.value);
    els.count.textContent = n + " / " + MAX_CHARS;
    els.count.classList.toggle("is-over", n > MAX_CHARS);
  }

  function showError(message) {
    els.error.textContent = message;
    els.error.hidden = !message;
  }

  function setSending(on, thinking) {
    // A disabled button drops keyboard and screen-reader focus to the body:
    // move it to the text box first, where the next reply is written.
    var active = document.activeElement;
    if (on && active && (active === els.submit || els.destinations.contains(active))) {
      els.text.focus({ preventScroll: true });
    }
    sending = on;
    els.submit.disabled = on;
    els.form.setAttribute("aria-busy", on ? "true" : "false");
    // a scenario turn is worked out before the answer comes back (up to ~10 s)
    els.submit.textContent = on ? (thinking ? "考え中…" : "送信中…") : "送信";
    els.submit.classList.toggle("is-thinking", !!(on && thinking));
    var buttons = els.destinations.querySelectorAll("button.destination");
    for (var i = 0; i < buttons.length; i++) buttons[i].disabled = on;
    els.restart.disabled = on;
    if (!on) takeRestartFocus();
  }

  // POSTs one reply. `fromForm`: the text came from the text box (emptied on success).
  function postReply(body, fromForm) {
    showError("");
    clearMoveNotice();
    setSending(true, !!scene);
    var epoch = viewEpoch;

    fetch(config.replyUrl, {
      method: "POST",
      headers: authHeaders({ "Content-Type": "application/json" }),
      body: JSON.stringify(body),
      cache: "no-store",
      credentials: "omit",
      referrerPolicy: "no-referrer"
    }).then(function (res) {
      if (res.ok) {
        return res.json().catch(function () { return null; }).then(function (payload) {
          // keep anything typed while a slow turn was being worked out
          if (fromForm && els.text.value.trim() === body.text) {
            els.text.value = "";
            updateCount();
          }
          // the addressee was for this reply only (the banner said so)
          if (body.to && addressee === body.to) setAddressee(null);
          var view = isObject(payload) && isObject(payload.view) ? payload.view : null;
          // A scenario stage answers with the turn itself: nothing to wait for. An agent answers later.
          els.note.hidden = !!view;
          if (!view) awaitAnswer(isObject(payload) ? str(payload.id) : "");
          if (view && !stopped) {
            if (viewEpoch === epoch) {
              renderView(view);
            } else if (str(view.version) !== lastVersion) {
              // a pushed view came in between: which of the two is newer is the stage's to say
              pollNow();
              return;
            }
          }
          if (!push.live) pollNow();
        });
      }
      return readErrorMessage(res).then(function (msg) {
        showError(SEND_PREFIX + msg);
      });
    }).catch(function () {
      showError(SEND_PREFIX + "通信に失敗しました。もう一度お試しください");
    }).then(function () {
      setSending(false);
    });
  }

  function withAddressee(body) {
    if (scene && addressee) body.to = addressee;
    return body;
  }

  function sendMove(place, text) {
    if (sending || stopped || !place) return;
    els.note.hidden = true;
    postReply(withAddressee({ text: text, move: place }), false);
  }

  els.restart.addEventListener("click", function () {
    if (sending || stopped) return;
    els.note.hidden = true;
    // a control, not a line the player said: the stage does not log it
    postReply({ text: restartText, restart: true }, false);
  });

  els.endingLeave.addEventListener("click", function () {
    els.endingLeave.hidden = true;
    els.endingClosed.hidden = false;
    if (shownEnding) storeLeft(shownEnding);
    els.restart.focus();
    queueFit();
  });

  function send() {
    if (sending || stopped) return;
    var text = els.text.value.trim();
    els.note.hidden = true;
    if (!text) {
      showError(SEND_PREFIX + "返事を入力してください");
      els.text.focus();
      return;
    }
    if (countChars(text) > MAX_CHARS) {
      showError(SEND_PREFIX + MAX_CHARS + " 文字以内で入力してください");
      return;
    }
    postReply(withAddressee({ text: text }), true);
  }

  els.form.addEventListener("submit", function (ev) {
    ev.preventDefault();
    send();
  });

  els.text.addEventListener("keydown", function (ev) {
    if (ev.isComposing || ev.keyCode === 229) return; // IME conversion in progress
    if (ev.key === "Enter" && (ev.ctrlKey || ev.metaKey)) {
      ev.preventDefault();
      send();
    }
  });

  els.text.addEventListener("input", function () {
    updateCount();
    if (els.text.value) els.note.hidden = true;
    if (!els.error.hidden && !sending) showError("");
  });

  if (/Mac|iPhone|iPad/.test(navigator.platform || "")) {
    var shortcut = document.querySelector(".reply-shortcut");
    if (shortcut) shortcut.textContent = "⌘+Enter で送信";
  }
  // A screen that is touched is a touch screen, whatever its pointer says: the keyboard shortcut's hint goes.
  document.addEventListener("pointerdown", function (ev) {
    if (ev.pointerType === "touch" || ev.pointerType === "pen") document.body.classList.add("is-touched");
  }, { capture: true, passive: true });

  updateCount();
  fitLayout();
  poll();
  connectPush();
})();
