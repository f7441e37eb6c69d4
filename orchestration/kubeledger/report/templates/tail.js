(function () {
  function check() {
    var charts = document.querySelectorAll('.plotly-graph-div');
    var drawn = 0;
    charts.forEach(function (div) {
      if (div._fullLayout && div.querySelector('.main-svg')) { drawn += 1; }
    });
    document.body.setAttribute('data-charts', String(charts.length));
    document.body.setAttribute('data-charts-drawn', String(drawn));
    var ok = typeof Plotly !== 'undefined' && drawn === charts.length &&
             window.__reportErrors.length === 0;
    document.body.setAttribute('data-render-ok', ok ? 'true' : 'false');
  }
  if (document.readyState === 'complete') { check(); }
  else { window.addEventListener('load', function () { setTimeout(check, 0); }); }
})();
