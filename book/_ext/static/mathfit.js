// Display equations wider than their column (a phone, a narrow window): once MathJax has
// typeset the page, an equation that would fit at no less than MIN_SCALE of its size is
// scaled down to fit; a longer one keeps its size and is marked "math-scroll" (book.css
// draws an edge shadow and a small "scroll" hint). Done again when the window changes size.
// window.bookMathFit is a promise that settles after the first pass.
(function () {
  "use strict";

  var MIN_SCALE = 0.7;

  function fit(eq) {
    var math = eq.querySelector(":scope > mjx-math");
    if (!math) {
      return;
    }
    // back to the size MathJax gave it, then measure
    if (eq.dataset.fitFontSize === undefined) {
      eq.dataset.fitFontSize = eq.style.fontSize || "";
    }
    eq.style.fontSize = eq.dataset.fitFontSize;
    eq.classList.remove("math-fitted", "math-scroll");
    if (eq.parentElement) {
      eq.parentElement.classList.remove("math-scroll-box");
    }
    var room = eq.clientWidth;
    var need = math.getBoundingClientRect().width;
    if (room <= 0 || need <= room + 1) {
      return;
    }
    var scale = room / need;
    if (scale >= MIN_SCALE) {
      var px = parseFloat(window.getComputedStyle(eq).fontSize);
      eq.style.fontSize = (px * scale * 0.98).toFixed(2) + "px";
      if (math.getBoundingClientRect().width <= eq.clientWidth + 1) {
        eq.classList.add("math-fitted");
        return;
      }
      eq.style.fontSize = eq.dataset.fitFontSize;
    }
    eq.classList.add("math-scroll");
    if (eq.parentElement) {
      eq.parentElement.classList.add("math-scroll-box");
    }
  }

  function fitAll() {
    var eqs = document.querySelectorAll('mjx-container[display="true"]');
    for (var i = 0; i < eqs.length; i++) {
      if (!eqs[i].parentElement.closest("mjx-container")) {
        fit(eqs[i]);
      }
    }
  }

  var done;
  window.bookMathFit = new Promise(function (resolve) {
    done = resolve;
  });

  function start() {
    var mj = window.MathJax;
    var ready = mj && mj.startup && mj.startup.promise ? mj.startup.promise : Promise.resolve();
    ready
      .then(fitAll, function () {})
      .then(function () {
        done();
      });
    var timer = null;
    window.addEventListener("resize", function () {
      window.clearTimeout(timer);
      timer = window.setTimeout(fitAll, 150);
    });
  }

  // MathJax is loaded with "defer": at "load" it has started and its promise exists.
  if (document.readyState === "complete") {
    start();
  } else {
    window.addEventListener("load", start);
  }
})();
