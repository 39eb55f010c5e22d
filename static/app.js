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

  function renderCurrent(current) {
    var speaker = str(current.speaker) || characterName;
    var text = str(current.text);
    var expression = str(current.expression);

    els.speaker.textContent = speaker;
    els.speaker.hidden = !speaker;

    if (els.speech.textContent !== text) {
      els.speech.textContent = text;
      // restart the small "new line" animation
      els.speech.classList.remove("is-new");
      void els.speech.offsetWidth;
      if (text) els.speech.classList.add("is-new");
    }

    // On a scenario stage the bubble shows only a line of someone present (after a
    // silent move the last speaker may have stayed behind).
    if (scene) {
      var present = false;
      castNames.forEach(function (name) { if (name === speaker) present = true; });
      els.speechBox.hidden = !text || !present;
    } else {
      els.speechBox.hidden = false;
    }

    // On a scenario stage the line belongs to whoever spoke, not to the stage's character.
    var who = (scene ? speaker || characterName : characterName || speaker) || "キャラクター";
    els.image.alt = faceLabel(who, expression);
    els.image.dataset.expression = expression;
    setImage(current.image_url, current.fallback_image_url);
  }

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
      setAddressee(addressee === id ? null : id);
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
    var speakingIndex = -1;
    order.forEach(function (item, i) {
      var node = castNodes.get(item.id);
      if (!node) {
        node = createCastMember(item.id);
        castNodes.set(item.id, node);
      }
      var c = item.data;
      var expression = str(c.expression);
      if (node.name.textContent !== item.name) node.name.textContent = item.name;
      // the button's name is what is read: who, the face, and whether they are speaking
      // (the visible 「話し中」 badge is CSS, so it is spelled out here)
      var buttonLabel = faceLabel(item.name, expression);
      node.img.dataset.expression = expression;
      setSlotImage(node.slot, c.image_url, c.fallback_image_url);

      var isSpeaking = item.id === speaking;
      if (isSpeaking) speakingIndex = i;
      node.button.classList.toggle("speaking", isSpeaking);
      if (isSpeaking) node.button.setAttribute("aria-current", "true");
      else node.button.removeAttribute("aria-current");
      node.button.setAttribute("aria-label", isSpeaking ? "話し中 " + buttonLabel : buttonLabel);
      if (c.responder === true) node.button.dataset.responder = "true";
      else delete node.button.dataset.responder;

      if (node.button === ref) {
        ref = ref.nextSibling;
      } else {
        els.cast.insertBefore(node.button, ref);
      }
    });
    els.cast.dataset.count = String(order.length);
    setSpeechTail(speakingIndex, order.length);
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

  function setAddressee(id) {
    addressee = id && castNames.has(id) ? id : null;
    castNodes.forEach(function (node, cid) {
      var on = cid === addressee;
      node.button.classList.toggle("selected", on);
      node.button.setAttribute("aria-pressed", on ? "true" : "false");
    });
    while (els.addressee.firstChild) els.addressee.removeChild(els.addressee.firstChild);
    if (addressee) {
      var label = document.createElement("span");
      label.className = "addressee-label";
      label.textContent = "話しかける相手: ";
      var name = document.createElement("strong");
      name.className = "addressee-name";
      name.textContent = castNames.get(addressee);
      var hint = document.createElement("span");
      hint.className = "addressee-hint";
      hint.textContent = "（もう一度タップで解除）";
      els.addressee.appendChild(label);
      els.addressee.appendChild(name);
      els.addressee.appendChild(hint);
    }
    els.addressee.hidden = !addressee;
  }

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
    renderEnding(isObject(sc.ending) ? sc.ending : null);
  }

  // The game has ended: a card with 「もう一度」, which starts a new game.
  var restartText = "もう一度";

  function renderEnding(ending) {
    var wasHidden = els.ending.hidden;
    // after an ending the composer offers only 「もう一度」 and a way out: no more lines to type
    els.form.hidden = !!ending;
    els.form.parentNode.hidden = !!ending;   // the (sticky) reply card with it
    if (!ending) {
      els.ending.hidden = true;
      els.endingClosed.hidden = true;
      els.endingLeave.hidden = false;
      return;
    }
    els.endingTitle.textContent = str(ending.title) || "おしまい";
    els.endingText.textContent = str(ending.text);
    els.endingText.hidden = !str(ending.text);
    restartText = str(ending.restart) || "もう一度";
    els.restart.textContent = restartText;
    els.restart.disabled = sending;
    els.ending.hidden = false;
    // the card is what the player can do now; focus waits until the button is enabled again
    if (wasHidden) {
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

    // The log follows new entries, unless the player has scrolled back to read older ones.
    var region = els.logRegion;
    var following = !entryNodes.size || region.scrollHeight - region.scrollTop - region.clientHeight < 24;
    var added = false;
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
        added = true;
      } else {
        updateEntry(node, entry);
      }
      if (node === ref) {
        ref = ref.nextSibling;
      } else {
        els.log.insertBefore(node, ref);
      }
    });

    if (added && following) region.scrollTop = region.scrollHeight;
    if (added) answerArrived(entries);
  }

  function render(data) {
    var stage = data.stage || {};
    characterName = str(stage.character_name);
    var sc = isObject(data.scene) ? data.scene : null;

    var title = characterName || str(stage.name) || "舞台";
    if (sc) title = str(stage.title) || str(stage.name) || characterName || "舞台";
    els.title.textContent = title;
    document.title = title + " — 舞台";

    renderScene(sc);
    renderCurrent(data.current || {});
    shownLog = Array.isArray(data.log) ? data.log : [];
    renderLog(shownLog);

    var version = data.version == null ? "" : String(data.version);
    var fresh = version !== lastVersion;
    lastVersion = version;
    document.body.dataset.version = lastVersion;
    if (fresh) revealLine();
    announceFromNowOn();
    document.body.dataset.state = "ready";
    refreshDebug();
    // voice.js (the 読み上げ toggle) listens for each rendered view
    document.dispatchEvent(new CustomEvent("butai:view", { detail: data }));
  }

  // After a change, the faces and the current line are brought into view above the sticky composer:
  // both when they fit together, else the line (what the player has to read). A player who has scrolled
  // the stage card away (reading the log or the debug view) is not moved.
  var stageCard = els.speechBox.closest(".stage-card");
  var replyCard = els.form.closest(".reply-card");
  var EDGE = 8;

  function revealLine() {
    var stage = stageCard.getBoundingClientRect();
    if (stage.bottom <= 0) return;
    var line = els.speechBox.hidden ? stage : els.speech.getBoundingClientRect();
    var room = Math.min(window.innerHeight, replyCard.getBoundingClientRect().top) - EDGE;
    var delta = 0;
    if (line.bottom - stage.top <= room - EDGE) {
      if (stage.top < EDGE) delta = stage.top - EDGE;
      else if (line.bottom > room) delta = line.bottom - room;
    } else {
      delta = line.bottom - room;
    }
    if (Math.abs(delta) >= 1) window.scrollBy(0, delta);
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
        return;
      }
      if (!res.ok) return;
      return res.json().then(function (body) {
        var turns = isObject(body) && Array.isArray(body.turns) ? body.turns : [];
        var turn = turns.length ? turns[turns.length - 1] : null;
        renderDebug(isObject(turn) ? turn : null);
        els.debug.hidden = false;
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
    els.restart.focus();
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

  updateCount();
  poll();
  connectPush();
})();
