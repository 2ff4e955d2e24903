// capidx site: filters, expandable rows and the per-agent view. The page is complete without this script
// (every row and card is in the HTML); it only hides and shows. Filters can be given in the URL, as a query
// (?q=review&tier=pro) or a fragment (#q=review&category=testing), and are written back to the fragment as they
// change; #agent-ID (the section's own anchor, so the link works without the script too) or #agent=ID shows
// one agent's cards.
"use strict";
(function () {
  var FILTERS = ["q", "category", "tier", "availability"];
  var form = document.getElementById("filters");
  var rows = Array.prototype.slice.call(document.querySelectorAll("tbody.capability"));
  var agentViews = Array.prototype.slice.call(document.querySelectorAll("section.agent-view"));
  var matrix = document.getElementById("matrix");
  var shown = document.getElementById("shown");
  var noMatch = document.getElementById("no-match");
  var tableWrap = document.querySelector("#matrix .table-wrap");
  var agentCount = document.querySelectorAll("#matrix-table thead th").length - 1;
  document.documentElement.classList.add("js");

  function setExpanded(row, expanded) {
    var button = row.querySelector("button.expand");
    var detail = row.querySelector("tr.detail");
    button.setAttribute("aria-expanded", expanded ? "true" : "false");
    detail.hidden = !expanded;
  }

  function words(text) {
    return text.toLowerCase().split(/\s+/).filter(function (word) { return word.length > 0; });
  }

  function matches(row, values) {
    var data = row.dataset;
    var text = data.text || "";
    var available = data.available ? data.available.split(" ") : [];
    if (!words(values.q || "").every(function (word) { return text.indexOf(word) !== -1; })) return false;
    if (values.category && data.category !== values.category) return false;
    if (values.tier && (" " + data.tiers + " ").indexOf(" " + values.tier + " ") === -1) return false;
    var wanted = values.availability || "";
    if (wanted === "some" && available.length === 0) return false;
    if (wanted === "all" && available.length !== agentCount) return false;
    if (wanted === "none" && available.length !== 0) return false;
    if (wanted.indexOf("agent:") === 0 && available.indexOf(wanted.slice(6)) === -1) return false;
    return true;
  }

  function currentValues() {
    var values = {};
    FILTERS.forEach(function (name) { values[name] = form.elements[name].value; });
    return values;
  }

  function applyFilters() {
    var values = currentValues();
    var count = 0;
    rows.forEach(function (row) {
      var keep = matches(row, values);
      row.hidden = !keep;
      if (keep) count += 1;
    });
    shown.textContent = count + " of " + rows.length + " capabilities shown.";
    noMatch.hidden = count !== 0;
    tableWrap.hidden = count === 0;  // not an empty table head: the line above says why
    document.body.dataset.shown = String(count);
  }

  function paramsFrom(text) {
    var params = {};
    text.replace(/^[?#]/, "").split("&").forEach(function (part) {
      if (!part) return;
      var pair = part.split("=");
      try {
        params[decodeURIComponent(pair[0])] = decodeURIComponent((pair[1] || "").replace(/\+/g, " "));
      } catch (error) {
        // a malformed escape in a hand-typed URL: ignore that parameter
      }
    });
    return params;
  }

  function showView(agentId) {
    var known = agentViews.some(function (view) { return view.dataset.agent === agentId; });
    matrix.hidden = Boolean(agentId && known);
    agentViews.forEach(function (view) { view.hidden = view.dataset.agent !== agentId; });
    document.querySelectorAll("nav a").forEach(function (link) {
      var current = agentId && known ? link.dataset.agentLink === agentId : link.id === "view-matrix-link";
      if (current) link.setAttribute("aria-current", "page"); else link.removeAttribute("aria-current");
    });
  }

  function route() {
    var params = Object.assign(paramsFrom(location.search), paramsFrom(location.hash));
    var hash = location.hash.replace(/^#/, "");
    if (hash.indexOf("cap-") === 0) {
      showView("");
      var row = document.getElementById(hash);
      if (row) {
        row.hidden = false;
        setExpanded(row, true);
        row.querySelector("button.expand").focus();
      }
      return;
    }
    var agent = hash.indexOf("agent-") === 0 ? hash.slice(6) : params.agent || "";
    FILTERS.forEach(function (name) {  // a link's filters replace the ones in force: none carries over
      form.elements[name].value = params[name] !== undefined ? params[name] : "";
    });
    showView(agent);
    applyFilters();
  }

  function remember() {
    var values = currentValues();
    var given = FILTERS.filter(function (name) { return values[name]; }).map(function (name) {
      return encodeURIComponent(name) + "=" + encodeURIComponent(values[name]);
    });
    var url = location.pathname + (given.length ? "#" + given.join("&") : "");  // the fragment alone says them
    history.replaceState(null, "", url);  // a filtered view can be shared; no hashchange, no reroute
  }

  rows.forEach(function (row) {
    setExpanded(row, false);
    row.querySelector("button.expand").addEventListener("click", function () {
      setExpanded(row, this.getAttribute("aria-expanded") !== "true");
    });
  });
  function filtered() {
    applyFilters();
    remember();
  }

  form.addEventListener("input", filtered);
  form.addEventListener("change", filtered);
  form.addEventListener("submit", function (event) { event.preventDefault(); });
  form.addEventListener("reset", function () { setTimeout(filtered, 0); });
  window.addEventListener("hashchange", route);
  route();
})();
