// The memory inspector's only script: send action forms to the JSON API with the CSRF header.
// Forms carry data-api (the route), data-method, and optionally data-next (where to go after)
// or data-receipt (show the JSON answer). Answers are shown with textContent, never as HTML.
"use strict";
(function () {
  const meta = document.querySelector('meta[name="csrf-token"]');
  const csrf = meta ? meta.getAttribute("content") : "";
  const status = document.getElementById("status");
  const receipt = document.getElementById("receipt");

  function say(text) {
    if (status) status.textContent = text;
  }

  document.addEventListener("submit", async function (event) {
    const form = event.target;
    if (!(form instanceof HTMLFormElement) || !form.dataset.api) return;
    event.preventDefault();
    const body = {};
    for (const el of form.elements) {
      if (!el.name) continue;
      body[el.name] = el.type === "checkbox" ? el.checked : el.value;
    }
    const buttons = form.querySelectorAll("button");
    buttons.forEach(function (b) { b.disabled = true; });
    say("Working…");
    try {
      const resp = await fetch(form.dataset.api, {
        method: form.dataset.method || "POST",
        credentials: "same-origin",
        headers: { "Content-Type": "application/json", "X-CSRF-Token": csrf },
        body: JSON.stringify(body),
      });
      const text = await resp.text();
      let data = null;
      try { data = JSON.parse(text); } catch (e) { data = null; }
      if (!resp.ok) {
        const detail = data && data.detail ? data.detail : text;
        say("Refused (" + resp.status + "): " + detail);
        return;
      }
      if (form.dataset.receipt && receipt) {
        receipt.hidden = false;
        receipt.textContent = readable(data);
        say("Done. Receipt below.");
        receipt.focus();
      } else if (form.dataset.next) {
        window.location.assign(form.dataset.next);
      } else {
        window.location.reload();
      }
    } catch (err) {
      say("Network error: " + err);
    } finally {
      buttons.forEach(function (b) { b.disabled = false; });
    }
  });
})();

// A receipt as "key: value" lines (nested objects indented), not raw JSON.
function readable(data, indent = "") {
  if (data === null || typeof data !== "object") return indent + String(data);
  return Object.entries(data).map(([key, value]) =>
    value !== null && typeof value === "object" && Object.keys(value).length
      ? `${indent}${key}:\n${readable(value, indent + "  ")}`
      : `${indent}${key}: ${Array.isArray(value) || value === null ? JSON.stringify(value) : String(value)}`
  ).join("\n");
}
