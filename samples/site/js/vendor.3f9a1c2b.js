/*! tiny-vendor v1.0.0 | fingerprinted build: vendor.3f9a1c2b.js
 * Stands in for a bundled third-party library. The hash in the file name
 * changes whenever the content changes, so the server may send
 * "Cache-Control: public, max-age=31536000, immutable" for it. */
(function (w) {
  "use strict";
  var vendor = {
    version: "1.0.0",
    build: "3f9a1c2b",
    ready: function (fn) {
      if (document.readyState !== "loading") fn();
      else document.addEventListener("DOMContentLoaded", fn);
    },
    formatBytes: function (n) {
      var units = ["B", "KB", "MB", "GB"], i = 0;
      while (n >= 1024 && i < units.length - 1) { n /= 1024; i++; }
      return (i === 0 ? n : n.toFixed(1)) + " " + units[i];
    }
  };
  w.tinyVendor = vendor;
  vendor.ready(function () {
    var el = document.getElementById("vendor-status");
    if (el) {
      el.textContent = "\u2713 vendor " + vendor.version + " (build " + vendor.build + ") loaded";
      el.className = "ok";
    }
  });
})(window);
