// Draws the stats page's charts with the vendored Chart.js from the data the server put in the page.
(function () {
  "use strict";
  var source = document.getElementById("chart-data");
  if (!source || typeof Chart === "undefined") { return; }
  var data = JSON.parse(source.textContent);
  function bars(id, series, label, color) {
    var canvas = document.getElementById(id);
    if (!canvas || !series) { return; }
    new Chart(canvas, {
      type: "bar",
      data: { labels: series.labels, datasets: [{ label: label, data: series.values, backgroundColor: color }] },
      options: { animation: false, plugins: { legend: { display: false } },
                 scales: { y: { beginAtZero: true, ticks: { precision: 0 } } } }
    });
  }
  var PALETTE = ["#4f7cac", "#c0504d", "#6aa66f", "#a67f4f", "#8a6aa6"];
  function stacked(id, series) {
    var canvas = document.getElementById(id);
    if (!canvas || !series) { return; }
    var names = Object.keys(series.series);
    new Chart(canvas, {
      type: "bar",
      data: { labels: series.labels, datasets: names.map(function (name, i) {
        return { label: name, data: series.series[name], backgroundColor: PALETTE[i % PALETTE.length] };
      }) },
      options: { animation: false, scales: { x: { stacked: false }, y: { beginAtZero: true, ticks: { precision: 0 } } } }
    });
  }
  function life(id, series) {
    var canvas = document.getElementById(id);
    if (!canvas || !series) { return; }
    new Chart(canvas, {
      type: "line",
      data: { labels: series.labels, datasets: [
        { label: "strength", data: series.values, borderColor: "#4f7cac", pointRadius: 0, tension: 0 },
        { label: "events", data: series.events, showLine: false, pointRadius: 6, pointBackgroundColor: "#c0504d" }
      ] },
      options: { animation: false, scales: { y: { min: 0, max: 1 } },
                 plugins: { tooltip: { callbacks: { afterLabel: function (item) {
                   return item.datasetIndex === 1 ? series.names[item.dataIndex] : ""; } } } } }
    });
  }
  life("chart-life", data.life);
  bars("chart-kinds", data.kinds, "count", "#4f7cac");
  bars("chart-strength", data.strength, "memories", "#6aa66f");
  bars("chart-types", data.types, "experiences", "#a67f4f");
  bars("chart-created", data.created, "stored", "#4f7cac");
  stacked("chart-retrievals", data.retrievals);
  stacked("chart-pruning", data.pruning);
  bars("chart-accessed", data.accessed, "last accessed", "#a67f4f");
  bars("chart-consolidation", data.consolidation, "experiences", "#8a6aa6");
  bars("chart-size", data.size, "bytes", "#c0504d");
}());
