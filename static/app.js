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

  var POLL_MS = 3000;          // normal polling interval
  var HIDDEN_POLL_MS = 15000;  // while the tab is in the background
  var BACKOFF_MAX_MS = 30000;  // ceiling for retries after network errors
  var MAX_CHARS = 1000;

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
    speaker: $("speaker-name"),
    speech: $("speech-text"),
    log: $("log"),
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
      if (u.protocol !== "https:" && u.protocol !== "http:") return null;
      base = u.origin + u.pathname;
    }
    base = base.replace(/\/+$/, "");
    return {
      stageUrl: base + "/stages/" + encodeURIComponent(stage),
      replyUrl: base + "/stages/" + encodeURIComponent(stage) + "/reply",
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
  var image = { primary: null, fallback: "", usingFallback: false };

  function setImage(primaryRaw, fallbackRaw) {
    var primary = resolveUrl(primaryRaw);
    var fallback = resolveUrl(fallbackRaw);
    if (primary === image.primary) {
      // Same picture; only follow a changed fallback if we are already showing it.
      if (image.usingFallback && fallback && fallback !== image.fallback) {
        image.fallback = fallback;
        els.image.src = fallback;
      } else {
        image.fallback = fallback;
      }
      return;
    }
    image.primary = primary;
    image.fallback = fallback;
    image.usingFallback = false;
    els.image.classList.remove("is-broken");
    if (primary) {
      els.image.src = primary;
    } else if (fallback) {
      image.usingFallback = true;
      els.image.src = fallback;
    } else {
      els.image.removeAttribute("src");
      els.image.classList.add("is-broken");
    }
  }

  els.image.addEventListener("error", function () {
    if (!image.usingFallback && image.fallback && image.fallback !== image.primary) {
      image.usingFallback = true;
      els.image.src = image.fallback;
      return;
    }
    els.image.classList.add("is-broken");
  });
  els.image.addEventListener("load", function () {
    els.image.classList.remove("is-broken");
  });

  function str(v) { return typeof v === "string" ? v : (v == null ? "" : String(v)); }

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

    var who = characterName || speaker || "キャラクター";
    els.image.alt = expression ? who + "（" + expression + "）" : who;
    els.image.dataset.expression = expression;
    setImage(current.image_url, current.fallback_image_url);
  }

  var entryNodes = new Map(); // entry id -> li

  function formatTime(iso) {
    if (typeof iso !== "string" || !iso) return "";
    var d = new Date(iso);
    if (isNaN(d.getTime())) return "";
    var hh = String(d.getHours()).padStart(2, "0");
    var mm = String(d.getMinutes()).padStart(2, "0");
    return hh + ":" + mm;
  }

  function createEntry(entry) {
    var li = document.createElement("li");
    li.dataset.id = entry.id;
    li.className = "entry " + (entry.role === "player" ? "role-player" : "role-character");

    var meta = document.createElement("div");
    meta.className = "entry-meta";
    var speaker = document.createElement("span");
    speaker.className = "entry-speaker";
    var time = document.createElement("time");
    time.className = "entry-time";
    meta.appendChild(speaker);
    meta.appendChild(time);

    var text = document.createElement("p");
    text.className = "entry-text";

    li.appendChild(meta);
    li.appendChild(text);
    updateEntry(li, entry);
    return li;
  }

  function updateEntry(li, entry) {
    var speaker = li.querySelector(".entry-speaker");
    var text = li.querySelector(".entry-text");
    var time = li.querySelector(".entry-time");
    var speakerText = str(entry.speaker) || (entry.role === "player" ? "あなた" : characterName);
    if (speaker.textContent !== speakerText) speaker.textContent = speakerText;
    if (text.textContent !== str(entry.text)) text.textContent = str(entry.text);
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
      entries.push({ id: id, role: e.role, speaker: e.speaker, text: e.text, created_at: e.created_at });
    }

    // drop entries that fell off the server's window
    entryNodes.forEach(function (node, id) {
      if (!wanted.has(id)) {
        node.remove();
        entryNodes.delete(id);
      }
    });

    var added = false;
    var ref = els.log.firstChild;
    entries.forEach(function (entry) {
      var node = entryNodes.get(entry.id);
      if (!node) {
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

    if (added) els.log.scrollTop = els.log.scrollHeight;
  }

  function render(data) {
    var stage = data.stage || {};
    characterName = str(stage.character_name);

    var title = characterName || str(stage.name) || "舞台";
    els.title.textContent = title;
    document.title = title + " — 舞台";

    renderCurrent(data.current || {});
    renderLog(Array.isArray(data.log) ? data.log : []);

    lastVersion = data.version == null ? "" : String(data.version);
    document.body.dataset.version = lastVersion;
    document.body.dataset.state = "ready";
  }

  // --------------------------------------------------------------- polling

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
    showNotice(message, "forbidden");
  }

  function poll() {
    if (stopped || inFlight) return;
    inFlight = true;
    pollQueued = false;

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

  document.addEventListener("visibilitychange", function () {
    if (!document.hidden) pollNow();
  });
  window.addEventListener("online", pollNow);
  window.addEventListener("hashchange", function () { location.reload(); });

  // ------------------------------------------------------------ reply form

  var sending = false;

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

  function setSending(on) {
    sending = on;
    els.submit.disabled = on;
    els.form.setAttribute("aria-busy", on ? "true" : "false");
    els.submit.textContent = on ? "送信中…" : "送信";
  }

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
    showError("");
    setSending(true);

    fetch(config.replyUrl, {
      method: "POST",
      headers: authHeaders({ "Content-Type": "application/json" }),
      body: JSON.stringify({ text: text }),
      cache: "no-store",
      credentials: "omit",
      referrerPolicy: "no-referrer"
    }).then(function (res) {
      if (res.ok) {
        els.text.value = "";
        updateCount();
        els.note.textContent = MSG_SENT;
        els.note.hidden = false;
        pollNow();
        return;
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
})();
