// Replay: a trace file uploaded to /api/replay comes back as one frame per event; the
// buttons and the slider step through them on the same board. A trace is a finished
// game, so every hand is shown.
"use strict";
let frames = [];

function showFrame(index) {
  const frame = frames[index];
  $("replay-step").value = index;
  $("replay-where").textContent = `event ${index + 1} of ${frames.length} · round ${frame.round} · ${frame.event}`;
  drawBoard($("board"), frame.board);
  const ends = Object.entries(frame.board.ends || {}).filter(([, v]) => v !== null);
  $("ends").textContent = ends.length ? `open ends ${ends.map(([a, v]) => `${a}=${v}`).join(" ")}` : "";
  $("others").textContent = frame.hands.map((h, s) => `seat ${s}: ${h.join(" ") || "-"}`).join(" · ") + ` · boneyard ${frame.boneyard} · scores ${frame.scores.join(", ")}`;
  $("hand").innerHTML = ""; $("prompt").innerHTML = ""; $("settlement").innerHTML = ""; $("hints").innerHTML = "";
  $("hint").disabled = true; $("next").hidden = true;
  $("log").textContent = frame.text;
  $("status").textContent = "replay"; $("status").dataset.phase = "replay";
}

async function loadTrace() {
  const file = $("replay-file").files[0];
  if (!file) return;
  $("error").textContent = "";
  try {
    const response = await fetch(`/api/replay?game=${Number($("replay-game").value) || 0}`, { method: "POST", headers: { "x-sniff-token": TOKEN }, body: await file.text() });
    const data = await response.json();
    if (!response.ok) throw new Error(data.error);
    frames = data.frames;
    $("replay-step").max = frames.length - 1;
    $("replay-controls").hidden = false;
    showFrame(0);
  } catch (error) { fail(error); }
}

$("replay-file").addEventListener("change", loadTrace);
$("replay-game").addEventListener("change", loadTrace);
$("replay-prev").addEventListener("click", () => frames.length && showFrame(Math.max(0, Number($("replay-step").value) - 1)));
$("replay-next").addEventListener("click", () => frames.length && showFrame(Math.min(frames.length - 1, Number($("replay-step").value) + 1)));
$("replay-step").addEventListener("input", () => frames.length && showFrame(Number($("replay-step").value)));
