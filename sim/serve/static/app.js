// The page: three modes (a game, a replay, the set-up board), each with its own route
// (#/game, #/replay, #/setup), section and state, so one never overwrites another and the
// browser's back button moves between them. A game's session id is kept in sessionStorage
// (per tab). Everything shown comes from /api; no rule is here.
//
// A game is drawn one moment at a time: an answer carries a frame per event since the
// table last drawn (your move, every bot's, every forced one), and the page draws each
// whole (board, hand, counts, scores, log, status) before the next, so nothing on the page
// belongs to another moment. A bot's turn is marked ("seat 2 is thinking") and its move
// drawn THINK_MS later; each move then stays HOLD_MS on the table.
"use strict";
const $ = (id) => document.getElementById(id);
const TOKEN = document.querySelector('meta[name="sniff-token"]').content;
const THINK_MS = 30;  // a bot's turn marked, then its move drawn (well under 100 ms later)
const HOLD_MS = { play: 650, draw: 300, pass: 500, round_start: 500 };  // a move on show

// ---------------------------------------------------------------- requests
class ApiError extends Error { constructor(message, status) { super(message); this.status = status; } }

// Progress for any request over a second: what it does and the seconds so far.
const working = new Map();
let workingId = 0;
function showProgress() {
  const now = performance.now(), items = [...working.values()].filter((w) => now - w.since >= 1000);
  $("progress").hidden = !items.length;
  if (items.length) $("progress-text").textContent = items.map((w) => `${w.what} · ${Math.floor((now - w.since) / 1000)} s`).join("; ");
}
setInterval(showProgress, 250);

async function api(method, path, body, what, raw) {
  const options = { method, headers: { "x-sniff-token": TOKEN } };
  if (raw !== undefined) options.body = raw;
  else if (body !== undefined) { options.body = JSON.stringify(body); options.headers["content-type"] = "application/json"; }
  const id = ++workingId;
  if (what) working.set(id, { what, since: performance.now() });
  try {
    const response = await fetch(path, options);
    const data = await response.json().catch(() => ({ error: `HTTP ${response.status}` }));
    if (!response.ok) throw new ApiError(data.error || `HTTP ${response.status}`, response.status);
    return data;
  } finally { working.delete(id); showProgress(); }
}

function fail(error) { $("error").textContent = error.message || String(error); }
function say(text) { $("status").textContent = text; }

// ---------------------------------------------------------------- routes
const MODES = ["game", "replay", "setup"];
function route() {
  const mode = (location.hash.match(/^#\/(\w+)/) || [])[1];
  const shown = MODES.includes(mode) ? mode : "game";
  for (const m of MODES) {
    $("mode-" + m).hidden = m !== shown;
    if (m === shown) $("nav-" + m).setAttribute("aria-current", "page"); else $("nav-" + m).removeAttribute("aria-current");
  }
  $("error").textContent = "";
  document.dispatchEvent(new CustomEvent("mode", { detail: shown }));
  redrawBoards();
}
window.addEventListener("hashchange", route);

// ---------------------------------------------------------------- the game
const game = { view: null, busy: false, review: null, history: null, clickedAt: null, token: 0, settings: null, shown: null };
window.sniffTimings = [];  // ms from a click to the first drawing of its answer (tests read it)
window.sniffTurns = [];  // ms from a bot's turn marked to its move drawn
window.sniffDrawn = [];  // what each drawn moment showed (tests check it against its frame)
function drawn() {
  if (game.clickedAt !== null) { window.sniffTimings.push(performance.now() - game.clickedAt); game.clickedAt = null; }
}

async function loadSetup() {
  const info = await api("GET", "/api/strategies");
  for (const name of info.strategies) $("opponents").add(new Option(name, name, name === info.default, name === info.default));
  const seats = () => {
    const n = Number($("players").value);
    $("seat").innerHTML = "";
    for (let s = 0; s < n; s++) $("seat").add(new Option(String(s), String(s)));
    $("target").max = info.targets[n]; $("target").value = info.targets[n];
  };
  $("players").addEventListener("change", seats);
  seats();
}

function lock(on) {
  game.busy = on;
  $("hand").classList.toggle("locked", on);
  for (const b of $("hand").querySelectorAll("button")) b.disabled = on || !b.classList.contains("legal");
  $("hint").disabled = on || !game.view || game.view.phase !== "move" || game.review !== null;
  $("takeback").disabled = on || !game.view || !game.view.can_take_back;
}

// A change of the game: the answer is drawn moment by moment. A 409 (the game moved on in
// another tab) or a 404 (it expired) is answered by fetching what is there now.
async function send(path, body, what) {
  if (game.busy) return;  // one request per decision: the hand is locked until it is drawn
  lock(true);
  $("error").textContent = "";
  game.clickedAt = performance.now();
  try { await show(await api("POST", path, body, what)); }
  catch (error) {
    game.clickedAt = null; lock(false);
    if (error.status === 409) await refresh("That click was for an earlier turn: this game moved on elsewhere (another tab or window). The table now shows the current turn.");
    else if (error.status === 404) lost(error);
    else fail(error);
  }
}

// The current state from the server, with a frame for each event this page has not drawn.
async function refresh(message) {
  if (!game.view) return;
  try {
    const view = await api("GET", `/api/games/${game.view.session}?since=${game.view.events}`);
    if (message) fail({ message });
    if (view.version !== game.view.version || message) await show(view);
  } catch (error) { if (error.status === 404) lost(error); else fail(error); }
}

function lost(error) {
  sessionStorage.removeItem("sniff-session");
  game.view = null; game.token++;
  $("table").hidden = true; $("intro").hidden = false;
  fail(error);
}

function settingsBody() {
  const body = { players: Number($("players").value), seat: Number($("seat").value),
    opponents: $("opponents").value, target: Number($("target").value) };
  if ($("seed").value !== "") body.seed = Number($("seed").value);
  return body;
}

async function newGame(body) {
  game.settings = { ...body }; delete game.settings.seed;
  $("hints").innerHTML = ""; $("analysis").innerHTML = "";
  game.view = null; game.token++;
  await send("/api/games", body, "dealing: preparing the engine (the first game on this machine compiles it once, about half a minute)");
  if (game.view) $("new-game").open = false;
}

// A pause of the moves on show; ticking "show bots' moves at once" ends it (and the rest).
const sleep = (ms) => new Promise((done) => {
  const timer = setTimeout(done, ms);
  game.wake = () => { clearTimeout(timer); done(); };
});

// What a frame shows, whole: the page draws nothing from another moment beside it.
function frameState(frame, before) {
  const fresh = frame.kind === "round_start";
  return { board: frame.board, marked: frame.marked, count: frame.count, sizes: frame.sizes, boneyard: frame.boneyard,
    scores: frame.scores, hand: frame.hand, round: frame.round, mover: frame.seat, kind: frame.kind, turn: null, thinking: false,
    log: [...(fresh ? [] : before.log), frame.line], sheet: frame.sheet_row ? [...before.sheet, frame.sheet_row] : before.sheet,
    settlement: frame.settlement || null, status: frame.line.text, index: frame.index };
}

// The frames of an answer, one after another: a bot's turn marked, its move, a pause.
async function animate(view, token) {
  const frames = view.recent || [];
  let state = game.shown || { log: [], sheet: [] };
  for (let i = 0; i < frames.length; i++) {
    const frame = frames[i], instant = $("instant").checked;
    if (token !== game.token) return false;
    const bot = ["play", "draw", "pass"].includes(frame.kind) && frame.seat !== view.seat;
    let turnAt = null;
    if (bot && !instant && i > 0) {
      drawState(view, { ...state, turn: frame.seat, thinking: true, mover: null, status: `seat ${frame.seat} is thinking…` });
      turnAt = performance.now();
      await sleep(THINK_MS);
      if (token !== game.token) return false;
    }
    state = frameState(frame, state);
    drawState(view, state);
    if (turnAt !== null) window.sniffTurns.push(performance.now() - turnAt);
    drawn();
    if (!instant && i < frames.length - 1) await sleep(HOLD_MS[frame.kind] || 0);
  }
  return token === game.token;
}

async function show(view) {
  const token = ++game.token, first = !game.view || game.view.session !== view.session;
  $("intro").hidden = true; $("table").hidden = false;
  if (first) { game.shown = null; game.review = null; }
  game.view = view; game.history = null;
  sessionStorage.setItem("sniff-session", view.session);
  if (location.hash !== "#/game") history.replaceState(null, "", "#/game");
  lock(true);
  if (!(await animate(view, token))) return;
  drawGame();
  drawn();
  lock(false);
  const focus = view.phase === "settled" ? $("next") : view.phase === "over" ? $("again") : $("hand").querySelector("button.legal");
  const active = document.activeElement;
  if (focus && (!active || active === document.body || active.closest("#dock, #hints, #intro, #new-game"))) focus.focus();
  if (view.phase === "over") $("dock").scrollIntoView({ block: "nearest" });
}

// The game as it stands: the latest moment, with your choices.
function drawGame() {
  const view = game.view;
  game.review = null;
  game.shown = liveState(view);
  drawState(view, game.shown, true);
  $("next").hidden = view.phase !== "settled";
  $("result").hidden = view.phase !== "over";
  $("hand").hidden = $("actions").hidden = view.phase === "over";
  if (view.phase === "over") { $("trace").href = `/api/games/${view.session}/trace`; $("trace").download = `serve-seed${view.seed}.jsonl`; }
  $("banner").textContent = view.banner || "";
  $("result").className = view.phase === "over" && view.winner === view.my_team ? "won" : "";
  $("moves").innerHTML = ""; $("moves-load").hidden = false;
  if (view.phase === "over") loadMoves().catch(fail);
}

function play(move) {
  $("hints").innerHTML = ""; $("prompt").innerHTML = "";
  return send(`/api/games/${game.view.session}/move`, { move, version: game.view.version }, "the other seats are playing (the first moves on this machine may compile the engine)");
}

async function hint() {
  $("hints").textContent = "";
  const budget = Number($("budget").value);
  try {
    showHint($("hints"), await api("POST", `/api/games/${game.view.session}/hint`, { budget }, `searching ${budget} play-outs per move (the first hint on this machine waits for the search to compile, once)`), true);
  } catch (error) { fail(error); }
}

async function takeBack() {
  $("hints").innerHTML = "";
  await send(`/api/games/${game.view.session}/takeback`, { version: game.view.version }, "taking your move back");
}

async function resume() {
  // ?session=ID opens a game made elsewhere (scripts/serve_screenshots.py uses it).
  const session = new URLSearchParams(location.search).get("session") || sessionStorage.getItem("sniff-session");
  if (!session) return;
  try { await show(await api("GET", `/api/games/${session}`)); $("new-game").open = false; }
  catch (error) { sessionStorage.removeItem("sniff-session"); }
}

// A move made in another tab: looked for when this tab comes back, and every few seconds.
function watch() {
  if (!game.view || game.busy || game.review !== null || document.visibilityState !== "visible" || $("mode-game").hidden) return;
  refresh().catch(() => {});
}
document.addEventListener("visibilitychange", watch);
window.addEventListener("focus", watch);
setInterval(watch, 5000);

$("setup").addEventListener("submit", (e) => { e.preventDefault(); newGame(settingsBody()).catch(fail); });
$("quick").addEventListener("click", () => newGame(settingsBody()).catch(fail));
$("again").addEventListener("click", () => newGame({ ...(game.settings || settingsBody()) }).catch(fail));
$("next").addEventListener("click", () => send(`/api/games/${game.view.session}/next`, { version: game.view.version }, "dealing the next round"));
$("hint").addEventListener("click", hint);
$("instant").addEventListener("change", () => { if ($("instant").checked && game.wake) game.wake(); });
$("takeback").addEventListener("click", () => takeBack().catch(fail));
loadSetup().then(resume).catch(fail);  // route() runs once every script is loaded (setup.js)
