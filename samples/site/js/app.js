// Peregrine sample: theme toggle + a small fetch of data/info.json.
(function () {
  "use strict";

  var root = document.documentElement;
  var KEY = "peregrine-theme";

  function applyTheme(theme) {
    if (theme === "dark") root.setAttribute("data-theme", "dark");
    else root.removeAttribute("data-theme");
    var btn = document.getElementById("theme-toggle");
    if (btn) {
      btn.textContent = theme === "dark" ? "Light mode" : "Dark mode";
      btn.setAttribute("aria-pressed", String(theme === "dark"));
    }
  }

  function storedTheme() {
    try { return localStorage.getItem(KEY); } catch (e) { return null; }
  }

  var prefersDark = window.matchMedia && window.matchMedia("(prefers-color-scheme: dark)").matches;
  applyTheme(storedTheme() || (prefersDark ? "dark" : "light"));

  var btn = document.getElementById("theme-toggle");
  if (btn) {
    btn.addEventListener("click", function () {
      var next = root.getAttribute("data-theme") === "dark" ? "light" : "dark";
      try { localStorage.setItem(KEY, next); } catch (e) { /* private mode */ }
      applyTheme(next);
    });
  }

  // Only the home page has an #info panel.
  var info = document.getElementById("info");
  if (!info) return;

  function row(label, value) {
    var dt = document.createElement("dt");
    dt.textContent = label;
    var dd = document.createElement("dd");
    dd.textContent = value;
    info.appendChild(dt);
    info.appendChild(dd);
  }

  // Resolve relative to this script, so the site also works under a RequestPath like /static.
  var script = document.currentScript;
  var base = script ? script.src : location.href;
  var url = new URL("../data/info.json", base);

  fetch(url, { headers: { Accept: "application/json" } })
    .then(function (res) {
      if (!res.ok) throw new Error("HTTP " + res.status);
      var type = res.headers.get("Content-Type") || "unknown";
      var etag = res.headers.get("ETag") || "none";
      return res.json().then(function (data) { return { data: data, type: type, etag: etag }; });
    })
    .then(function (r) {
      info.textContent = "";
      row("Name", r.data.name);
      row("What", r.data.description);
      row("Runtime", r.data.runtime);
      row("Type", r.type);
      row("ETag", r.etag);
    })
    .catch(function (err) {
      info.textContent = "";
      row("Error", "could not load data/info.json (" + err.message + ")");
    });
})();
