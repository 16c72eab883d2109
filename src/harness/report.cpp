// SPDX-License-Identifier: Apache-2.0
#include "blockscale/harness/report.h"

#include <locale>
#include <sstream>

#include "blockscale/golden/json_text.h"

namespace blockscale::harness {

namespace {

std::string q(const std::string& s) { return golden::json_string(s); }

// A table cell or an inline span: one line, and '|' does not end the cell.
std::string md_escape(const std::string& s) {
  std::string o;
  for (char ch : s) {
    if (ch == '|') {
      o += "\\|";
    } else if (ch == '\n' || ch == '\r') {
      o += ' ';
    } else {
      o += ch;
    }
  }
  return o;
}

// The text of the leading HTML comment (the command line, which may hold anything): "-->" or
// "--!>" would end the comment early (HTML Living Standard, "Comments"), and what followed would
// render as Markdown.
// A space after the two dashes of each: "-- >", "-- !>". (Built by appending: GCC 12 warns
// falsely, -Wrestrict, on the std::string::insert this once used.)
std::string comment_escape(const std::string& s) {
  const std::string o = md_escape(s);
  std::string out;
  out.reserve(o.size() + 8);
  for (std::size_t i = 0; i < o.size(); ++i) {
    if (o.compare(i, 3, "-->") == 0 || o.compare(i, 4, "--!>") == 0) {
      out.append("-- ");
      ++i;  // both dashes written
    } else {
      out.push_back(o[i]);
    }
  }
  return out;
}

std::string status(const TargetResult& r) {
  if (r.skipped()) return "skipped";
  if (!r.error.empty()) return "error";
  return r.total.mismatches ? "MISMATCH" : "ok";
}

std::string pad(const std::string& s, std::size_t w) { return s.size() >= w ? s : s + std::string(w - s.size(), ' '); }
std::string lpad(const std::string& s, std::size_t w) { return s.size() >= w ? s : std::string(w - s.size(), ' ') + s; }

std::string worst(const Stats& s) {
  if (s.mismatches == 0) return "0";
  std::string w = std::to_string(s.worst_ulps);
  if (s.nan_mismatches) w += " (+" + std::to_string(s.nan_mismatches) + " NaN)";
  return w;
}

std::string device_line(const DeviceDescription& d) {
  std::string s = d.name;
  if (!d.compute_capability.empty()) s += ", compute capability " + d.compute_capability;
  if (d.multiprocessors) s += ", " + std::to_string(d.multiprocessors) + " SMs";
  if (!d.driver.empty()) s += ", driver " + d.driver;
  if (!d.cuda_driver.empty()) s += ", CUDA driver API " + d.cuda_driver;
  if (!d.cuda_runtime.empty()) s += ", runtime " + d.cuda_runtime;
  return s;
}

std::string data_list(const std::vector<DataKind>& v) {
  std::string s;
  for (DataKind d : v) {
    if (!s.empty()) s += ',';
    s += to_string(d);
  }
  return s;
}

// A stream in the classic locale, whatever the program's global one: under a German
// std::locale::global the JSON would read 1.048.576 outputs and 0,5 s.
std::ostringstream classic_stream() {
  std::ostringstream s;
  s.imbue(std::locale::classic());
  return s;
}

}  // namespace

std::string conform_table(const ConformReport& r) {
  std::size_t w = 6;
  for (const TargetResult& t : r.targets) w = std::max(w, t.target.name().size());
  std::ostringstream s = classic_stream();
  s << pad("target", w) << "  " << lpad("cases", 9) << "  " << lpad("outputs", 12) << "  " << lpad("mismatches", 10)
    << "  " << lpad("worst ulp", 9) << "  status\n";
  std::size_t ran = 0, skipped = 0, failed = 0;
  for (const TargetResult& t : r.targets) {
    s << pad(t.target.name(), w) << "  " << lpad(std::to_string(t.total.cases), 9) << "  "
      << lpad(std::to_string(t.total.outputs), 12) << "  " << lpad(std::to_string(t.total.mismatches), 10) << "  "
      << lpad(worst(t.total), 9) << "  " << status(t) << "\n";
    if (!t.target.instruction.model_override.empty()) s << "    model: table row with " << t.target.instruction.model_override << "\n";
    if (t.skipped()) {
      ++skipped;
      s << "    skipped: " << t.target.skip_reason << "\n";
    } else {
      ++ran;
      failed += t.failed();
      if (!t.error.empty()) s << "    error: " << t.error << "\n";
      for (const DataResult& d : t.data) {
        if (d.stats.mismatches == 0) continue;
        s << "    " << to_string(d.data) << ": " << d.stats.mismatches << " of " << d.stats.outputs
          << " differ (NaN on one side: " << d.stats.nan_mismatches << ", +0/-0: " << d.stats.zero_sign_mismatches
          << "); first:";
        for (std::size_t i = 0; i < std::min<std::size_t>(3, d.stats.examples.size()); ++i) {
          const Mismatch& m = d.stats.examples[i];
          const OutputFormat f = t.output;
          s << " [case " << m.case_index << " (" << m.row << "," << m.col << ") device " << hex_code(f, m.device)
            << " model " << hex_code(f, m.model) << "]";
        }
        s << "\n";
      }
    }
  }
  s << "\n" << ran << " targets run, " << skipped << " skipped, " << failed << " failing; " << r.outputs()
    << " outputs compared, " << r.mismatches() << " mismatches (" << r.seconds << " s)\n";
  return s.str();
}

std::string discovery_table(const Discovery& d) {
  std::ostringstream s = classic_stream();
  s << "discovery: " << d.instruction << " (table row " << d.row
    << (d.model_override.empty() ? "" : " with " + d.model_override) << "; " << d.probes << " probe outputs)\n";
  std::size_t w1 = 9, w2 = 10, w3 = 5;
  for (const DiscoveryItem& i : d.items) {
    w1 = std::max(w1, i.parameter.size());
    w2 = std::max(w2, i.discovered.size());
    w3 = std::max(w3, i.table.size());
  }
  s << "  " << pad("parameter", w1) << "  " << pad("discovered", w2) << "  " << pad("table", w3) << "  verdict\n";
  for (const DiscoveryItem& i : d.items) {
    s << "  " << pad(i.parameter, w1) << "  " << pad(i.discovered, w2) << "  " << pad(i.table, w3) << "  "
      << to_string(i.verdict) << "\n";
  }
  return s.str();
}

static std::string table_text(const TableFit& t) {
  if (t.row.empty()) return "none (" + t.why_not + ")";
  return t.row + " with split-K " + std::to_string(t.split_k) + ": " + std::to_string(t.matches) + "/" +
         std::to_string(t.outputs) +
         (t.amax_d_equal ? (*t.amax_d_equal ? ", amax_d equal" : ", amax_d differs") : std::string()) +
         (t.bit_exact() ? " (bit-exact)" : "");
}

std::string external_table(const std::vector<ExternalStudy>& studies) {
  std::ostringstream s = classic_stream();
  for (const ExternalStudy& st : studies) {
    s << st.run.library << ": " << st.run.config << "\n";
    if (!st.run.error.empty()) {
      s << "    not run: " << st.run.error << "\n";
      continue;
    }
    if (!st.run.algo.empty()) s << "    " << st.run.algo << "\n";
    for (std::size_t i = 0; i < std::min<std::size_t>(3, st.fits.size()); ++i) {
      const ScheduleFit& f = st.fits[i];
      s << "    " << (i == 0 ? (st.bit_exact() ? "BIT-EXACT " : "best      ") : "          ") << f.matches << "/"
        << f.outputs << " match, worst " << f.worst_ulps << " ulp"
        << (f.nan_mismatches ? " (+" + std::to_string(f.nan_mismatches) + " NaN)" : std::string()) << ": " << f.schedule
        << "\n";
    }
    s << "    table row: " << table_text(st.table) << "\n";
  }
  return s.str();
}

std::string to_json(const Session& ses) {
  std::ostringstream s = classic_stream();
  const DeviceDescription& d = ses.device;
  s << "{\n  \"blockscale_conform\": 1,\n  \"date\": " << q(ses.date) << ",\n  \"command\": " << q(ses.command)
    << ",\n  \"device\": {\"kind\": " << q(d.kind) << ", \"name\": " << q(d.name)
    << ", \"compute_capability\": " << q(d.compute_capability) << ", \"driver\": " << q(d.driver)
    << ", \"cuda_driver\": " << q(d.cuda_driver) << ", \"cuda_runtime\": " << q(d.cuda_runtime)
    << ", \"multiprocessors\": " << d.multiprocessors << "}";
  if (ses.conform) {
    const ConformReport& r = *ses.conform;
    s << ",\n  \"conformance\": {\"seed\": " << r.seed << ", \"pattern\": " << q(r.pattern) << ", \"data\": "
      << q(data_list(r.data)) << ", \"seconds\": " << r.seconds << ", \"outputs\": " << r.outputs()
      << ", \"mismatches\": " << r.mismatches() << ", \"failed\": " << (r.failed() ? "true" : "false")
      << ", \"targets\": [";
    for (std::size_t i = 0; i < r.targets.size(); ++i) {
      const TargetResult& t = r.targets[i];
      s << (i ? "," : "") << "\n    {\"name\": " << q(t.target.name()) << ", \"kind\": " << q(to_string(t.target.kind))
        << ", \"status\": " << q(status(t));
      if (t.skipped()) s << ", \"skip_reason\": " << q(t.target.skip_reason);
      if (!t.error.empty()) s << ", \"error\": " << q(t.error);
      if (t.target.kind == TargetKind::gemm) s << ", \"schedule\": " << q(t.target.gemm.schedule);
      if (!t.target.instruction.model_override.empty()) s << ", \"model_override\": " << q(t.target.instruction.model_override);
      s << ", \"cases\": " << t.total.cases << ", \"outputs\": " << t.total.outputs
        << ", \"mismatches\": " << t.total.mismatches << ", \"worst_ulps\": " << t.total.worst_ulps
        << ", \"nan_mismatches\": " << t.total.nan_mismatches << ", \"data\": [";
      for (std::size_t j = 0; j < t.data.size(); ++j) {
        const DataResult& dr = t.data[j];
        s << (j ? ", " : "") << "{\"data\": " << q(to_string(dr.data)) << ", \"cases\": " << dr.stats.cases
          << ", \"outputs\": " << dr.stats.outputs << ", \"mismatches\": " << dr.stats.mismatches
          << ", \"worst_ulps\": " << dr.stats.worst_ulps << ", \"device_seconds\": " << dr.device_seconds
          << ", \"model_seconds\": " << dr.model_seconds << ", \"examples\": [";
        for (std::size_t k = 0; k < dr.stats.examples.size(); ++k) {
          const Mismatch& m = dr.stats.examples[k];
          s << (k ? ", " : "") << "{\"case\": " << m.case_index << ", \"row\": " << m.row << ", \"col\": " << m.col
            << ", \"device\": " << m.device << ", \"model\": " << m.model << "}";
        }
        s << "]}";
      }
      s << "]}";
    }
    s << "\n  ]}";
  }
  s << ",\n  \"discovery\": [";
  for (std::size_t i = 0; i < ses.discoveries.size(); ++i) {
    const Discovery& dv = ses.discoveries[i];
    s << (i ? "," : "") << "\n    {\"instruction\": " << q(dv.instruction) << ", \"row\": " << q(dv.row)
      << ", \"model_override\": " << q(dv.model_override)
      << ", \"probes\": " << dv.probes << ", \"disagrees\": " << (dv.disagrees() ? "true" : "false") << ", \"items\": [";
    for (std::size_t j = 0; j < dv.items.size(); ++j) {
      const DiscoveryItem& it = dv.items[j];
      s << (j ? ", " : "") << "\n      {\"parameter\": " << q(it.parameter) << ", \"discovered\": " << q(it.discovered)
        << ", \"table\": " << q(it.table) << ", \"verdict\": " << q(to_string(it.verdict))
        << ", \"evidence\": " << q(it.evidence) << "}";
    }
    s << "]}";
  }
  s << "\n  ],\n  \"external\": [";
  for (std::size_t i = 0; i < ses.external.size(); ++i) {
    const ExternalStudy& st = ses.external[i];
    s << (i ? "," : "") << "\n    {\"library\": " << q(st.run.library) << ", \"config\": " << q(st.run.config)
      << ", \"algo\": " << q(st.run.algo) << ", \"error\": " << q(st.run.error) << ", \"m\": " << st.run.m
      << ", \"n\": " << st.run.n << ", \"k\": " << st.run.k << ", \"bit_exact\": " << (st.bit_exact() ? "true" : "false")
      << ", \"table\": {\"row\": " << q(st.table.row) << ", \"why_not\": " << q(st.table.why_not)
      << ", \"split_k\": " << st.table.split_k << ", \"matches\": " << st.table.matches
      << ", \"outputs\": " << st.table.outputs
      << (st.table.amax_d_equal ? std::string(", \"amax_d_equal\": ") + (*st.table.amax_d_equal ? "true" : "false") : "")
      << ", \"bit_exact\": " << (st.table.bit_exact() ? "true" : "false") << "}"
      << ", \"fits\": [";
    for (std::size_t j = 0; j < st.fits.size(); ++j) {
      const ScheduleFit& f = st.fits[j];
      s << (j ? ", " : "") << "{\"schedule\": " << q(f.schedule) << ", \"matches\": " << f.matches
        << ", \"outputs\": " << f.outputs << ", \"worst_ulps\": " << f.worst_ulps
        << ", \"nan_mismatches\": " << f.nan_mismatches << "}";
    }
    s << "]}";
  }
  s << "\n  ],\n  \"external_note\": " << q(ses.external_note) << ",\n  \"sparse_mm\": [";
  for (std::size_t i = 0; i < ses.sparse_mm.size(); ++i) {
    const SparseMmStudy& st = ses.sparse_mm[i];
    const SparseMmRun& r = st.run;
    s << (i ? "," : "") << "\n    {\"file\": " << q(r.file) << ", \"library\": " << q(r.library) << ", \"backend\": "
      << q(r.backend) << ", \"gpu\": " << q(r.gpu) << ", \"kernel\": " << q(r.kernel) << ", \"error\": " << q(r.error)
      << ", \"input\": " << q(to_string(r.input)) << ", \"output\": " << q(r.error.empty() ? to_string(r.output) : "")
      << ", \"m\": " << r.m << ", \"n\": " << r.n << ", \"k\": " << r.k << ", \"header_slices\": " << r.slices
      << ", \"repeats_identical\": " << (r.repeats_identical ? "true" : "false") << ", \"model\": " << q(st.model)
      << ", \"why_not\": " << q(st.why_not) << ", \"tiles\": " << st.tiles << ", \"tried\": " << st.tried
      << ", \"bit_exact\": " << (st.bit_exact() ? "true" : "false") << ", \"exact_slices\": [";
    for (std::size_t j = 0; j < st.exact.size(); ++j) s << (j ? ", " : "") << st.exact[j];
    s << "], \"best_slices\": " << st.best << ", \"matches\": " << st.matches << ", \"outputs\": " << st.outputs << "}";
  }
  s << "\n  ]\n}\n";
  return s.str();
}

std::string to_markdown(const Session& ses) {
  std::ostringstream s = classic_stream();
  s << "<!-- Generated by `" << comment_escape(ses.command) << "`; do not edit by hand. -->\n\n";
  s << "| | |\n|---|---|\n| device | " << md_escape(device_line(ses.device)) << " |\n| date (UTC) | " << ses.date
    << " |\n";
  if (ses.conform) {
    const ConformReport& r = *ses.conform;
    s << "| seed | " << r.seed << " |\n| data sets | " << data_list(r.data) << " |\n| targets selected | "
      << (r.pattern.empty() ? std::string("all") : md_escape(r.pattern)) << " |\n| outputs compared | " << r.outputs()
      << " |\n| mismatches | " << r.mismatches() << " |\n| wall time | " << static_cast<long long>(r.seconds)
      << " s |\n\n";
    s << "| target | cases | outputs | mismatches | worst ulp | status |\n|---|---:|---:|---:|---:|---|\n";
    std::vector<const TargetResult*> skipped;
    for (const TargetResult& t : r.targets) {
      if (t.skipped()) {
        skipped.push_back(&t);
        continue;
      }
      const std::string& mo = t.target.instruction.model_override;
      s << "| `" << md_escape(t.target.name()) << "`" << (mo.empty() ? "" : " (model: `" + md_escape(mo) + "`)") << " | "
        << t.total.cases << " | " << t.total.outputs << " | "
        << t.total.mismatches << " | " << worst(t.total) << " | " << status(t) << " |\n";
    }
    if (!skipped.empty()) {
      s << "\nSkipped (" << skipped.size() << "):\n\n";
      for (const TargetResult* t : skipped) {
        s << "* `" << md_escape(t->target.name()) << "`: " << md_escape(t->target.skip_reason) << "\n";
      }
    }
    s << "\n";
  } else {
    s << "\n";
  }
  for (const Discovery& d : ses.discoveries) {
    s << "#### Discovery: `" << md_escape(d.instruction) << "`\n\nTable row `" << d.row << "`"
      << (d.model_override.empty() ? "" : " with the candidate change `" + md_escape(d.model_override) + "`") << "; "
      << d.probes << " probe outputs.\n\n| parameter | discovered | table | verdict | evidence |\n|---|---|---|---|---|\n";
    for (const DiscoveryItem& i : d.items) {
      s << "| " << md_escape(i.parameter) << " | " << md_escape(i.discovered) << " | " << md_escape(i.table) << " | "
        << to_string(i.verdict) << " | " << md_escape(i.evidence) << " |\n";
    }
    s << "\n";
  }
  if (!ses.external.empty() || !ses.external_note.empty()) {
    s << "#### External fp8 GEMMs\n\n";
    if (!ses.external_note.empty()) s << md_escape(ses.external_note) << "\n\n";
    if (!ses.external.empty()) {
      s << "| library | configuration | algorithm | best emulator schedule | matching outputs | worst ulp | table row |\n"
        << "|---|---|---|---|---:|---:|---|\n";
      for (const ExternalStudy& st : ses.external) {
        s << "| " << md_escape(st.run.library) << " | " << md_escape(st.run.config) << " | ";
        if (!st.run.error.empty()) {
          s << "not run: " << md_escape(st.run.error) << " | | | | |\n";
          continue;
        }
        const ScheduleFit* f = st.fits.empty() ? nullptr : &st.fits.front();
        s << md_escape(st.run.algo) << " | " << (f ? md_escape(f->schedule) : "-") << " | "
          << (f ? std::to_string(f->matches) + " / " + std::to_string(f->outputs) + (st.bit_exact() ? " (bit-exact)" : "")
                : "-")
          << " | " << (f ? std::to_string(f->worst_ulps) : "-") << " | " << md_escape(table_text(st.table)) << " |\n";
      }
      s << "\n";
    }
  }
  if (!ses.sparse_mm.empty()) {
    s << "#### External 2:4 sparse GEMMs\n\n"
      << "| run | library | input -> D | M x N x K | S that reproduce every output | best S: matching outputs |\n"
      << "|---|---|---|---|---|---:|\n";
    for (const SparseMmStudy& st : ses.sparse_mm) {
      const SparseMmRun& r = st.run;
      s << "| " << md_escape(r.file) << " | " << md_escape(r.library) << " | " << to_string(r.input)
        << (r.error.empty() ? " -> " + to_string(r.output) : "") << " | " << r.m << " x " << r.n << " x " << r.k << " | ";
      if (!r.error.empty()) {
        s << "not run: " << md_escape(r.error) << " | |\n";
      } else if (!st.why_not.empty()) {
        s << "no model: " << md_escape(st.why_not) << " | |\n";
      } else {
        s << (st.exact.empty() ? "none" : st.exact_text()) << " (of 1.." << st.tried << ") | " << st.best << ": " << st.matches << " / "
          << st.outputs << " |\n";
      }
    }
    s << "\n";
  }
  return s.str();
}

}  // namespace blockscale::harness
