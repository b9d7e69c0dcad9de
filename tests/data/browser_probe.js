// Measures a qdqreport HTML report in the browser and writes the result as JSON into a "qdq-probe" pre element
// (read back by tests/test_browser.py through `chromium --dump-dom`). With window.QDQ_PRINT set, the
// page's own @media print rules are applied first, so the layout measured is the printed one.
(function () {
  "use strict";

  function applyPrintRules() {
    const rules = [];
    for (const sheet of document.styleSheets) {
      for (const rule of sheet.cssRules) {
        if (rule instanceof CSSMediaRule && /\bprint\b/.test(rule.media.mediaText)) {
          for (const inner of rule.cssRules) rules.push(inner.cssText);
        }
      }
    }
    const style = document.createElement("style");
    style.textContent = rules.join("\n");
    document.head.appendChild(style);
  }

  function round(x) { return Math.round(x * 10) / 10; }

  function describe(el) {
    const id = el.id ? "#" + el.id : "";
    const cls = el.className && typeof el.className === "string" ? "." + el.className.split(" ").join(".") : "";
    return el.tagName.toLowerCase() + id + cls;
  }

  function tables() {
    return Array.from(document.querySelectorAll("table")).map(function (table) {
      const box = table.closest(".tbl");
      const outer = (box || table).getBoundingClientRect();
      const inner = table.getBoundingClientRect();
      return {
        head: (table.querySelector("tr") || table).textContent.trim().slice(0, 80),
        box: !!box,
        boxRight: round(outer.right),
        fits: inner.right <= (box ? outer.right : innerWidth) + 0.5,
        scrollsX: !!box && ["auto", "scroll"].indexOf(getComputedStyle(box).overflowX) >= 0,
        // Prose cells squeezed into a column a few words wide: a note of 40+ characters wrapped to a tower of lines.
        squeezed: Array.from(table.querySelectorAll("td")).filter(function (td) {
          return td.innerText.trim().length >= 40 && td.getBoundingClientRect().width < 110;  // shown text only
        }).map(function (td) { return round(td.getBoundingClientRect().width) + " px: " + td.innerText.trim().slice(0, 60); }),
        // Words set flush right as numbers are: a judgement ("collapse: top-1 changed on ...") in a numeric cell.
        proseRight: Array.from(table.querySelectorAll("td")).filter(function (td) {
          const align = getComputedStyle(td).textAlign;
          return (align === "right" || align === "end") && (td.innerText.match(/[A-Za-z]{3,}/g) || []).length >= 3;
        }).map(function (td) { return td.innerText.trim().slice(0, 60); }),
      };
    });
  }

  // Boxes that would cut their content on paper: scroll boxes, tables, code blocks, figures.
  function clipping() {
    return Array.from(document.querySelectorAll(".tbl, .scroll, pre, figure, table")).map(function (el) {
      const style = getComputedStyle(el);
      const clipsX = style.overflowX !== "visible" && el.scrollWidth > el.clientWidth + 1;
      const clipsY = style.overflowY !== "visible" && el.scrollHeight > el.clientHeight + 1;
      const rect = el.getBoundingClientRect();
      return { el: describe(el), clipsX: clipsX || rect.right > innerWidth + 0.5, clipsY: clipsY };
    }).filter(function (b) { return b.clipsX || b.clipsY; });
  }

  function closedDetails() {
    return Array.from(document.querySelectorAll("details:not([open])")).map(function (d) {
      let height = 0;
      for (const child of d.children) {
        if (child.tagName !== "SUMMARY") height += child.getBoundingClientRect().height;
      }
      return { summary: (d.querySelector("summary") || d).textContent.trim().slice(0, 60), contentHeight: round(height) };
    });
  }

  // The smallest rendered size of any text inside the plots, in CSS px.
  function minPlotText() {
    let smallest = null;
    for (const svg of document.querySelectorAll("svg.plot")) {
      const box = svg.viewBox.baseVal;
      const rect = svg.getBoundingClientRect();
      if (!box || !box.width || !rect.width) continue;
      const scale = rect.width / box.width;
      for (const text of svg.querySelectorAll("text")) {
        const size = parseFloat(getComputedStyle(text).fontSize) * scale;
        if (size > 0 && (smallest === null || size < smallest)) smallest = size;
      }
    }
    return smallest === null ? null : round(smallest);
  }

  function wideElements() {
    return Array.from(document.body.querySelectorAll("*")).filter(function (el) {
      return el.getBoundingClientRect().right > innerWidth + 1 && !el.closest(".tbl, pre, figure.wide, nav.toc");
    }).slice(0, 8).map(function (el) { return describe(el) + ": " + el.textContent.slice(0, 60) + " @" + round(el.getBoundingClientRect().right); });
  }

  function measure() {
    if (window.QDQ_PRINT) applyPrintRules();
    const result = {
      innerWidth: innerWidth,
      scrollWidth: document.documentElement.scrollWidth,
      scrollHeight: document.documentElement.scrollHeight,
      wide: wideElements(),
      tables: tables(),
      clipping: clipping(),
      closedDetails: closedDetails(),
      // The comparisons' output names of twelve characters or fewer broken across lines ("finge / rprin / t").
      brokenNames: Array.from(document.querySelectorAll("#comparisons td code")).filter(function (c) {
        const text = c.textContent.trim();
        return text.length > 0 && text.length <= 12 && !/\s/.test(text) && c.getClientRects().length > 1;
      }).map(function (c) { const s = c.closest("section"); return c.textContent.trim() + " in #" + (s ? s.id : ""); }),
      minPlotTextPx: minPlotText(),
      ids: Array.from(document.querySelectorAll("[id]")).map(function (el) { return el.id; }),
      links: Array.from(document.querySelectorAll("a[href]")).map(function (a) { return a.getAttribute("href"); }),
      toc: Array.from(document.querySelectorAll("nav.toc a")).map(function (a) { return a.getAttribute("href"); }),
      sticky: (function () { const nav = document.querySelector("nav.toc"); return nav ? getComputedStyle(nav).position : null; })(),
      sections: Array.from(document.querySelectorAll("body > section[id]")).map(function (s) { return s.id; }),
      svgs: Array.from(document.querySelectorAll("svg")).map(function (svg) {
        const label = svg.getAttribute("aria-labelledby");
        const title = svg.querySelector(":scope > title");
        return { labelledby: !!label && !!document.getElementById(label), title: title ? title.textContent : "" };
      }),
      resources: performance.getEntriesByType("resource").map(function (e) { return e.name; }),
    };
    const out = document.createElement("pre");
    out.id = "qdq-probe";
    out.textContent = JSON.stringify(result);
    document.body.appendChild(out);
  }

  addEventListener("load", measure);
})();
