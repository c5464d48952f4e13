/* global document, window, setInterval */
// The dashboard's only script of its own: expiry countdowns, the analytics charts, and keyboard access to tables that
// scroll sideways. Pages work without it (the server renders the countdown's starting text and every figure in tables).
(function () {
  'use strict';

  // A table wider than the screen scrolls inside its box: that box takes the keyboard focus (arrow keys scroll it)
  // while, and only while, there is something to scroll.
  function focusableScrollers() {
    document.querySelectorAll('.table-scroll').forEach(function (box) {
      if (box.scrollWidth > box.clientWidth) box.setAttribute('tabindex', '0');
      else box.removeAttribute('tabindex');
    });
  }
  focusableScrollers();
  window.addEventListener('resize', focusableScrollers);

  function remaining(ms) {
    if (ms <= 0) return 'expired';
    var s = Math.floor(ms / 1000);
    var h = Math.floor(s / 3600);
    var m = Math.floor((s % 3600) / 60);
    return 'expires in ' + (h > 0 ? h + 'h ' : '') + m + 'm ' + (s % 60) + 's';
  }

  function tick() {
    var now = Date.now();
    document.querySelectorAll('[data-expires]').forEach(function (el) {
      var left = Date.parse(el.getAttribute('data-expires')) - now;
      el.textContent = remaining(left);
      if (left <= 0) {
        el.classList.add('expired');
        document.querySelectorAll('[data-disable-on-expiry]').forEach(function (b) { b.disabled = true; });
      }
    });
  }
  if (document.querySelector('[data-expires]')) {
    tick();
    setInterval(tick, 1000);
  }

  var island = document.getElementById('analytics-data');
  if (island && window.Chart) {
    var data = JSON.parse(island.textContent);
    var palette = ['#2563eb', '#dc2626', '#16a34a', '#9333ea', '#ea580c'];
    data.charts.forEach(function (chart) {
      var canvas = document.getElementById(chart.id);
      if (!canvas) return;
      new window.Chart(canvas, {
        type: chart.type,
        data: {
          labels: data.labels,
          datasets: chart.series.map(function (s, i) {
            return { label: s.label, data: s.values, borderColor: palette[i % palette.length], backgroundColor: palette[i % palette.length], spanGaps: true };
          }),
        },
        options: { animation: false, responsive: true, maintainAspectRatio: false, plugins: { legend: { position: 'bottom' } }, scales: { y: { beginAtZero: true } } },
      });
    });
  }
})();
