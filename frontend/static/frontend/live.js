/* Progressive enhancement of the live parts of the pages (a run's progress, a comparison's
 * table and plot). An element with data-live-url is an HTML fragment that the server renders
 * whole; every data-live-every milliseconds it is fetched again and swapped in, until the
 * fragment carries data-live-final. Keyboard focus stays on the element with the same id, and
 * a change of data-live-status is read out through the page's polite live region. Without
 * JavaScript the pages work the same, one reload at a time. */
(function () {
  "use strict";

  function announce(text) {
    var announcer = document.getElementById("live-announcer");
    if (announcer && text) {
      announcer.textContent = text;
    }
  }

  function swap(region, html) {
    var template = document.createElement("template");
    template.innerHTML = html.trim();
    var fresh = template.content.firstElementChild;
    if (!fresh) {
      return region;
    }
    var active = document.activeElement;
    var focusedId = active && region.contains(active) ? active.id : "";
    var before = region.getAttribute("data-live-status");
    region.replaceWith(fresh);
    if (focusedId) {
      var again = document.getElementById(focusedId);
      if (again) {
        again.focus();
      }
    }
    if (fresh.getAttribute("data-live-status") !== before) {
      announce(fresh.getAttribute("data-live-announce"));
    }
    return fresh;
  }

  function follow(region) {
    var every = parseInt(region.getAttribute("data-live-every") || "1500", 10);
    var failures = 0;
    function tick() {
      fetch(region.getAttribute("data-live-url"), { credentials: "same-origin" })
        .then(function (response) {
          if (!response.ok) {
            throw new Error("HTTP " + response.status);
          }
          return response.text();
        })
        .then(function (html) {
          failures = 0;
          region = swap(region, html);
          if (!region.hasAttribute("data-live-final")) {
            window.setTimeout(tick, every);
          }
        })
        .catch(function () {
          failures += 1;
          window.setTimeout(tick, every * Math.min(10, 1 + failures));
        });
    }
    window.setTimeout(tick, every);
  }

  document.querySelectorAll("[data-live-url]").forEach(function (region) {
    if (!region.hasAttribute("data-live-final")) {
      follow(region);
    }
  });

  /* A form's radio group shows only the fields of its chosen value (all of them without
   * JavaScript): the run form's method options, the comparison form's kind of budgets. */
  function revealChosen(name, prefix) {
    var radios = document.querySelectorAll("input[name=" + name + "]");
    function show() {
      radios.forEach(function (input) {
        var fields = document.getElementById(prefix + input.value);
        if (fields) {
          fields.hidden = !input.checked;
        }
      });
    }
    radios.forEach(function (input) {
      input.addEventListener("change", show);
    });
    show();
  }
  revealChosen("method", "options-");
  revealChosen("budget_mode", "budgets-");

  /* The new-project form shows the prior its label set takes: the two-label box for two
   * labels, the prior over the labels for more. The other is disabled, so it is not sent
   * (the server ignores it anyway when left as it was or emptied). */
  function countLabels(text) {
    var count = 0, item = "", quoted = false;
    for (var i = 0; i <= text.length; i += 1) {
      var c = text.charAt(i);
      if (c === '"') {
        quoted = !quoted;
        item += c;
      } else if (i === text.length || (c === "," && !quoted)) {
        count += item.trim() ? 1 : 0;
        item = "";
      } else {
        item += c;
      }
    }
    return count;
  }
  var labelSet = document.querySelector("textarea[name=labels], input[name=labels]");
  var twoLabels = document.querySelector("[data-field=default_prior]");
  var overLabels = document.querySelector("[data-field=default_label_prior]");
  function showPrior() {
    var many = countLabels(labelSet.value) > 2;
    [[twoLabels, many], [overLabels, !many]].forEach(function (pair) {
      pair[0].hidden = pair[1];
      pair[0].querySelectorAll("input, textarea").forEach(function (input) {
        input.disabled = pair[1];
      });
    });
  }
  if (labelSet && twoLabels && overLabels) {
    labelSet.addEventListener("input", showPrior);
    showPrior();
  }

  /* A page that shows a form's errors moves focus to their summary (data-error-summary), so
   * that it is read out and in view; a link of the summary focuses its field. */
  var summary = document.querySelector("[data-error-summary]");
  if (summary) {
    summary.focus();
    summary.addEventListener("click", function (event) {
      var link = event.target.closest("a[href^='#']");
      var field = link && document.getElementById(link.getAttribute("href").slice(1));
      if (field) {
        event.preventDefault();
        field.scrollIntoView({ block: "center" });
        field.focus();
      }
    });
  }

  /* A form with data-confirm asks before it is sent (one that cannot be undone, such as
   * withdrawing a round); listened for on the document, so forms swapped in live ask too.
   * Without JavaScript the form's own text says what it does. */
  document.addEventListener("submit", function (event) {
    var question = event.target.getAttribute("data-confirm");
    if (question && !window.confirm(question)) {
      event.preventDefault();
    }
  });
})();
