// The page: a game per tab (its session id in sessionStorage, which is per tab), the
// server's view drawn as it comes. Everything shown comes from /api; no rule is here.
"use strict";
const $ = (id) => document.getElementById(id);
let view = null;
const TOKEN = document.querySelector('meta[name="sniff-token"]').content;

async function api(method, path, body) {
  const options = { method, headers: { "x-sniff-token": TOKEN } };
  if (body !== undefined) { options.body = JSON.stringify(body); options.headers["content-type"] = "application/json"; }
  const response = await fetch(path, options);
  const data = await response.json().catch(() => ({ error: `HTTP ${response.status}` }));
  if (!response.ok) throw new Error(data.error || `HTTP ${response.status}`);
  return data;
}

function fail(error) { $("error").textContent = error.message || String(error); }
function busy(text) { $("status").textContent = text; }

async function loadSetup() {
  const info = await api("GET", "/api/strategies");
  for (const name of info.strategies) {
    const option = new Option(name, name, name === info.default, name === info.default);
    $("opponents").add(option);
  }
  const seats = () => {
    const n = Number($("players").value);
    $("seat").innerHTML = "";
    for (let s = 0; s < n; s++) $("seat").add(new Option(String(s), String(s)));
    $("target").max = info.targets[n]; $("target").value = info.targets[n];
  };
  $("players").addEventListener("change", seats);
  seats();
}

async function newGame(event) {
  event.preventDefault();
  $("error").textContent = ""; $("hints").innerHTML = "";
  busy("dealing (the first game with a new set of opponents compiles them: about 20-40 s)...");
  const body = { players: Number($("players").value), seat: Number($("seat").value),
    opponents: $("opponents").value, target: Number($("target").value) };
  if ($("seed").value !== "") body.seed = Number($("seed").value);
  try { show(await api("POST", "/api/games", body)); } catch (error) { busy(""); fail(error); }
}

function teamOf(seat) { return view.players === 4 ? seat % 2 : seat; }

function show(next) {
  view = next;
  sessionStorage.setItem("sniff-session", view.session);
  $("error").textContent = "";
  drawBoard($("board"), view.board);
  const ends = Object.entries(view.board.ends || {}).filter(([, v]) => v !== null);
  $("ends").textContent = ends.length ? `open ends ${ends.map(([a, v]) => `${a}=${v}`).join(" ")} · count ${view.count}` : "";
  const others = view.sizes.map((n, s) => s === view.seat ? null : `seat ${s} (${view.strategies[s]}): ${n} tiles`).filter(Boolean);
  $("others").textContent = `${others.join(" · ")} · boneyard ${view.boneyard} · scores ${view.scores.map((v, t) => `${view.teams[t]}${t === view.my_team ? " (you)" : ""} ${v}`).join(", ")}`;
  const legal = new Set(view.options.map((o) => o.tile));
  drawHand($("hand"), view.hand, legal, choose);
  $("prompt").innerHTML = "";
  $("hint").disabled = view.phase !== "move" || !view.options.length;
  $("next").hidden = view.phase !== "settled";
  $("trace").hidden = view.phase !== "over";
  if (view.phase === "over") { $("trace").href = `/api/games/${view.session}/trace`; $("trace").download = `serve-${view.session}.jsonl`; }
  const status = { move: view.forced ? "you drew a tile that fits: choose its end" : "your move: click a highlighted tile",
    settled: `round ${view.round} settled: see the hands below, then Next round`,
    over: view.winner === null ? "game over: no winner" : (view.winner === view.my_team ? "game over: you win" : `game over: ${view.teams[view.winner]} wins`) };
  busy(`round ${view.round} · target ${view.target} · ` + status[view.phase]);
  $("status").dataset.phase = view.phase;
  $("log").textContent = view.log.join("");
  $("log").scrollTop = $("log").scrollHeight;
  drawSheet();
  $("settlement").innerHTML = "";
  if (view.settlement) {
    const rows = view.settlement.hands.map((hand, s) => `<tr><td>seat ${s}</td><td style="text-align:left">${hand.join(" ") || "(out)"}</td><td>${view.settlement.hand_pips[s]} pips</td><td>−${view.settlement.penalties[s]}</td></tr>`);
    $("settlement").innerHTML = `<b>Settlement (${view.settlement.reason})</b><table>${rows.join("")}</table>`;
  }
}

function drawSheet() {
  const head = `<tr><th>round</th>${view.teams.map((t) => `<th>${t}</th>`).join("")}</tr>`;
  const rows = view.sheet.map((r) => `<tr><td>${r.round}</td>${r.scores.map((v, t) => `<td title="+${r.gained[t]} −${r.penalties[t]}">${v}</td>`).join("")}</tr>`);
  $("sheet").innerHTML = head + rows.join("") + `<tr><th>now</th>${view.scores.map((v) => `<th>${v}</th>`).join("")}</tr>`;
}

function choose(tile, g) {
  const options = view.options.filter((o) => o.tile === tile);
  if (options.length === 1) return play(options[0].move);
  g.classList.add("chosen");
  $("prompt").innerHTML = `${tile} fits two ends: `;
  for (const option of options) {
    const button = document.createElement("button");
    button.textContent = `${option.text} (${option.points ? "+" + option.points : "no points"})`;
    button.className = "end-choice";
    button.addEventListener("click", () => play(option.move));
    $("prompt").appendChild(button);
  }
}

let inFlight = false;  // one move per decision: the hand is locked until the answer is drawn
async function play(move) {
  if (inFlight) return;
  inFlight = true; $("hand").classList.add("locked");
  $("hints").innerHTML = "";
  try { show(await api("POST", `/api/games/${view.session}/move`, { move, version: view.version })); }
  catch (error) { fail(error); }
  finally { inFlight = false; $("hand").classList.remove("locked"); }
}

async function nextRound() {
  if (inFlight) return;
  inFlight = true;
  try { show(await api("POST", `/api/games/${view.session}/next`, { version: view.version })); }
  catch (error) { fail(error); }
  finally { inFlight = false; }
}

const pct = (e) => `${(100 * e.mean).toFixed(1)}% [${(100 * e.low).toFixed(1)}, ${(100 * e.high).toFixed(1)}]`;
const pts = (e) => `${e.mean.toFixed(1)} [${e.low.toFixed(1)}, ${e.high.toFixed(1)}]`;

async function hint() {
  $("hints").textContent = "thinking...";
  try {
    showHint(await api("POST", `/api/games/${view.session}/hint`, { budget: Number($("budget").value) }));
  } catch (error) { $("hints").textContent = ""; fail(error); }
}

function showHint(h) {
  const rows = h.moves.map((m) => `<tr class="${m.move === h.best ? "best" : ""}" data-move="${m.move}"><td>${m.move === h.best ? "★ " : ""}${m.name}</td><td>${m.now}</td><td>${pct(m.win)}</td><td>${pts(m.points)}</td><td>${m.heuristics.join(", ") || "-"}</td></tr>`);
  $("hints").innerHTML = `<table id="hint-table"><tr><th>move</th><th>now</th><th>chance to win (95%)</th><th>round points (95%)</th><th>heuristics</th></tr>${rows.join("")}</table><small>${h.budget} play-outs per move, ${h.seconds} s (as sniff hint)</small>`;
}

async function resume() {
  // ?session=ID opens a game made elsewhere (scripts/serve_screenshots.py uses it).
  const session = new URLSearchParams(location.search).get("session") || sessionStorage.getItem("sniff-session");
  if (!session) return;
  try { show(await api("GET", `/api/games/${session}`)); } catch (error) { sessionStorage.removeItem("sniff-session"); }
}

$("setup").addEventListener("submit", newGame);
$("next").addEventListener("click", nextRound);
$("hint").addEventListener("click", hint);
loadSetup().then(resume).catch(fail);
