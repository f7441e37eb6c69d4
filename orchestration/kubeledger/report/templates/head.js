window.__reportErrors = [];
(function () {
  function record(message) {
    window.__reportErrors.push(String(message));
    document.documentElement.setAttribute('data-report-errors',
                                          JSON.stringify(window.__reportErrors));
  }
  window.onerror = function (message, source, line) { record(message + ' @' + line); };
  window.addEventListener('unhandledrejection', function (event) {
    record('unhandled rejection: ' + (event.reason && event.reason.message || event.reason));
  });
  var originalError = console.error;
  console.error = function () {
    record('console.error: ' + Array.prototype.join.call(arguments, ' '));
    return originalError.apply(console, arguments);
  };
})();
