// Machine files: TOML read with toml11 (header-only), checked key by key so that every mistake
// is reported as "file:line: key 'k' in [table] ...", and written back by to_toml.
#include "cost/machine.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <set>
#include <sstream>
#include <utility>

#include <toml.hpp>

#include "core/files.hpp"

namespace commsched::cost {

namespace detail {
/// Compiled-in presets (presets.cpp, generated from config/machines/*.toml).
struct Preset {
  std::string_view name;
  std::string_view text;
};
std::span<const Preset> presets();
}  // namespace detail

namespace {

Machine builtin_default() {
  Machine m;
  m.name = "default";
  m.description = "a generic cluster: shared-memory nodes, one NIC per node, one cluster";
  m.at(LinkClass::self) = {2e-7, 5e-11};
  m.at(LinkClass::node) = {5e-7, 1e-10};
  m.at(LinkClass::cluster) = {2e-6, 1e-10};
  m.at(LinkClass::inter) = {2e-5, 1e-9};
  m.node_beta_s_per_byte = 1e-10;
  m.inter_sharing = 1.0;
  m.copy_beta_s_per_byte = 1e-10;
  return m;
}

// Thrown inside the parser only; parse_machine turns it into the error string.
struct FileError {
  std::string message;
};

class Reader {
 public:
  explicit Reader(std::string file) : file_(std::move(file)) {}

  [[noreturn]] void fail(const toml::value& at, const std::string& what) const {
    throw FileError{file_ + ":" + std::to_string(at.location().line()) + ": " + what};
  }

  static std::string where(const std::string& table) {
    return table.empty() ? std::string("at top level") : "in [" + table + "]";
  }

  // The entries of a table, in file order, rejecting keys not in `allowed`.
  std::vector<std::pair<std::string, const toml::value*>> entries(
      const toml::value& table, const std::string& name,
      std::initializer_list<std::string_view> allowed) const {
    std::vector<std::pair<std::string, const toml::value*>> out;
    for (const auto& [key, value] : table.as_table()) out.emplace_back(key, &value);
    std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) {
      const auto la = a.second->location().line(), lb = b.second->location().line();
      return la != lb ? la < lb : a.first < b.first;
    });
    for (const auto& [key, value] : out)
      if (std::find(allowed.begin(), allowed.end(), key) == allowed.end()) {
        std::string list;
        for (std::string_view k : allowed) list += (list.empty() ? "" : ", ") + std::string(k);
        fail(*value, "unknown key '" + key + "' " + where(name) + " (valid: " + list + ")");
      }
    return out;
  }

  // A number in (0, max], or [0, max] with allow_zero. Machine files describe real machines;
  // the bounds (machine.hpp) keep every time the simulator adds up finite.
  double number(const toml::value& v, const std::string& key, const std::string& table,
                bool allow_zero, double max, std::string_view unit) const {
    char bound[32];
    std::snprintf(bound, sizeof bound, "%g", max);
    const std::string need = std::string(allow_zero ? "a non-negative number" : "a positive number") +
                             " up to " + bound + (unit.empty() ? "" : " ") + std::string(unit);
    double x = 0.0;
    if (v.is_floating()) {
      x = v.as_floating();
    } else if (v.is_integer()) {
      x = static_cast<double>(v.as_integer());
    } else {
      fail(v, "key '" + key + "' " + where(table) + " must be " + need);
    }
    if (!std::isfinite(x) || x < 0.0 || (!allow_zero && x == 0.0) || x > max)
      fail(v, "key '" + key + "' " + where(table) + " must be " + need);
    return x;
  }

  std::string string(const toml::value& v, const std::string& key,
                     const std::string& table) const {
    if (!v.is_string()) fail(v, "key '" + key + "' " + where(table) + " must be a string");
    return v.as_string().str;
  }

  const toml::value& table(const toml::value& v, const std::string& name) const {
    if (!v.is_table()) fail(v, "'" + name + "' must be a table ([" + name + "])");
    return v;
  }

 private:
  std::string file_;
};

void read_link(const Reader& r, const toml::value& v, const std::string& name, Link& link) {
  r.table(v, name);
  bool alpha = false, beta = false;
  const toml::value* overhead = nullptr;
  for (const auto& [key, value] : r.entries(v, name, {"alpha", "beta", "overhead"})) {
    if (key == "alpha") {
      link.alpha_s = r.number(*value, key, name, true, kMaxAlphaS, "s");
      alpha = true;
    } else if (key == "overhead") {
      link.overhead_s = r.number(*value, key, name, true, kMaxAlphaS, "s");
      overhead = value;
    } else {
      link.beta_s_per_byte = r.number(*value, key, name, false, kMaxBetaSPerByte, "s/byte");
      beta = true;
    }
  }
  if (!alpha) r.fail(v, "key 'alpha' missing in [" + name + "]");
  if (!beta) r.fail(v, "key 'beta' missing in [" + name + "]");
  if (overhead && link.overhead_s > link.alpha_s)
    r.fail(*overhead, "key 'overhead' in [" + name + "] must not exceed alpha: it is the part "
                      "of alpha during which a message holds its ports");
}

void read_cluster(const Reader& r, const toml::value& v, std::size_t index, Machine& m) {
  const std::string name = "#" + std::to_string(index + 1);
  if (!v.is_table()) r.fail(v, "each [[cluster]] entry must be a table");
  ClusterSpec spec;
  bool have_nodes = false;
  for (const auto& [key, value] : r.entries(v, "cluster", {"name", "hosts", "nodes"})) {
    const toml::value& x = *value;
    if (key == "name") {
      spec.name = r.string(x, key, "cluster");
    } else if (key == "hosts") {
      if (!x.is_array() || x.as_array().empty())
        r.fail(x, "key 'hosts' in [cluster] must be a non-empty array of host name patterns");
      for (const toml::value& h : x.as_array()) {
        if (!h.is_string() || h.as_string().str.empty())
          r.fail(h, "key 'hosts' in [cluster] must be a non-empty array of host name patterns");
        spec.hosts.push_back(h.as_string().str);
      }
    } else {
      const bool ok = x.is_array() && x.as_array().size() == 2 &&
                      x.as_array()[0].is_integer() && x.as_array()[1].is_integer() &&
                      x.as_array()[0].as_integer() >= 0 &&
                      x.as_array()[0].as_integer() <= x.as_array()[1].as_integer() &&
                      x.as_array()[1].as_integer() < (1 << 30);
      if (!ok)
        r.fail(x, "key 'nodes' in [cluster] must be [first, last] node indices, 0 <= first <= "
                  "last");
      spec.first_node = static_cast<int>(x.as_array()[0].as_integer());
      spec.last_node = static_cast<int>(x.as_array()[1].as_integer());
      have_nodes = true;
    }
  }
  if (spec.hosts.empty() == !have_nodes)
    r.fail(v, "[[cluster]] " + std::string(spec.name.empty() ? name : "'" + spec.name + "'") +
                  " needs exactly one of the keys 'hosts' and 'nodes'");
  if (spec.name.empty()) spec.name = "cluster" + std::to_string(index);
  for (const ClusterSpec& other : m.clusters) {
    if (other.name == spec.name) r.fail(v, "key 'name' in [cluster]: '" + spec.name + "' twice");
    if (have_nodes && other.first_node >= 0 && spec.first_node <= other.last_node &&
        other.first_node <= spec.last_node)
      r.fail(v, "key 'nodes' in [cluster] '" + spec.name + "' overlaps cluster '" + other.name +
                    "'");
  }
  m.clusters.push_back(std::move(spec));
}

void read_size_factor(const Reader& r, const toml::value& v, Machine& m) {
  if (!v.is_table()) r.fail(v, "each [[size_factor]] entry must be a table");
  SizeFactor row;
  bool have_min = false;
  for (const auto& [key, value] :
       r.entries(v, "size_factor", {"min_bytes", "alpha_factor", "beta_factor"})) {
    const toml::value& x = *value;
    if (key == "min_bytes") {
      if (!x.is_integer() || x.as_integer() < 0 || x.as_integer() > kMaxMessageBytes)
        r.fail(x, "key 'min_bytes' in [size_factor] must be a non-negative integer (bytes) "
                  "up to 2^40");
      row.min_bytes = static_cast<Bytes>(x.as_integer());
      if (!m.size_factors.empty() && row.min_bytes <= m.size_factors.back().min_bytes)
        r.fail(x, "key 'min_bytes' in [size_factor] must exceed the previous row's (" +
                      std::to_string(m.size_factors.back().min_bytes) +
                      "): rows go from small messages to large");
      have_min = true;
    } else if (key == "alpha_factor") {
      row.alpha_factor = r.number(x, key, "size_factor", false, kMaxFactor, "");
    } else {
      row.beta_factor = r.number(x, key, "size_factor", false, kMaxFactor, "");
    }
  }
  if (!have_min) r.fail(v, "key 'min_bytes' missing in [[size_factor]]");
  m.size_factors.push_back(row);
}

void read_machine(const Reader& r, const toml::value& root, Machine& m) {
  bool have_cluster_link = false, have_node = false, have_inter = false, have_self = false;
  for (const auto& [key, value] :
       r.entries(root, "", {"name", "description", "link", "node", "inter_cluster", "memory",
                            "rendezvous", "native", "layout", "cluster", "size_factor"})) {
    const toml::value& v = *value;
    if (key == "name") {
      m.name = r.string(v, key, "");
    } else if (key == "description") {
      m.description = r.string(v, key, "");
    } else if (key == "link") {
      r.table(v, "link");
      for (const auto& [cls, lv] :
           r.entries(v, "link", {"self", "node", "cluster", "inter"})) {
        const auto it = std::find(kLinkClassNames.begin(), kLinkClassNames.end(), cls);
        read_link(r, *lv, "link." + cls, m.link[static_cast<std::size_t>(
                                             it - kLinkClassNames.begin())]);
        have_self |= cls == "self";
        have_node |= cls == "node";
        have_cluster_link |= cls == "cluster";
        have_inter |= cls == "inter";
      }
    } else if (key == "node") {
      r.table(v, "node");
      for (const auto& [k, x] : r.entries(v, "node", {"beta"}))
        m.node_beta_s_per_byte = r.number(*x, k, "node", true, kMaxBetaSPerByte, "s/byte");
    } else if (key == "inter_cluster") {
      r.table(v, "inter_cluster");
      for (const auto& [k, x] : r.entries(v, "inter_cluster", {"sharing"}))
        m.inter_sharing = r.number(*x, k, "inter_cluster", true, 1.0, "");
    } else if (key == "memory") {
      r.table(v, "memory");
      for (const auto& [k, x] : r.entries(v, "memory", {"copy_beta"}))
        m.copy_beta_s_per_byte = r.number(*x, k, "memory", true, kMaxBetaSPerByte, "s/byte");
    } else if (key == "rendezvous") {
      r.table(v, "rendezvous");
      for (const auto& [k, x] : r.entries(v, "rendezvous", {"min_bytes", "wait"})) {
        if (k == "wait") {
          m.rendezvous_wait = r.number(*x, k, "rendezvous", true, kMaxFactor, "");
          continue;
        }
        if (!x->is_integer() || x->as_integer() < 1 || x->as_integer() > kMaxMessageBytes)
          r.fail(*x, "key 'min_bytes' in [rendezvous] must be a positive integer (bytes) up "
                     "to 2^40");
        m.rendezvous_bytes = static_cast<Bytes>(x->as_integer());
      }
    } else if (key == "native") {
      r.table(v, "native");
      for (const auto& [k, x] : r.entries(v, "native", {"all_peers", "order"})) {
        if (k == "order") {
          if (!x->is_string() || (x->as_string() != "rank" && x->as_string() != "ring"))
            r.fail(*x, "key 'order' in [native] must be \"rank\" or \"ring\"");
          m.native_rank_order = x->as_string() == "rank";
          continue;
        }
        if (!x->is_boolean()) r.fail(*x, "key 'all_peers' in [native] must be true or false");
        m.native_all_peers = x->as_boolean();
      }
    } else if (key == "layout") {
      r.table(v, "layout");
      for (const auto& [k, x] : r.entries(v, "layout", {"split"})) {
        if (!x->is_integer() || x->as_integer() < 1 || x->as_integer() > (1 << 20))
          r.fail(*x, "key 'split' in [layout] must be a positive integer (clusters)");
        m.cluster_split = static_cast<int>(x->as_integer());
      }
    } else if (key == "size_factor") {
      if (!v.is_array())
        r.fail(v, "'size_factor' must be an array of tables ([[size_factor]])");
      for (const toml::value& row : v.as_array()) read_size_factor(r, row, m);
    } else {  // cluster
      if (!v.is_array()) r.fail(v, "'cluster' must be an array of tables ([[cluster]])");
      for (std::size_t i = 0; i < v.as_array().size(); ++i)
        read_cluster(r, v.as_array()[i], i, m);
    }
  }
  if (!have_cluster_link) r.fail(root, "table [link.cluster] missing (alpha and beta required)");
  if (!have_node) m.at(LinkClass::node) = m.at(LinkClass::cluster);
  if (!have_inter) m.at(LinkClass::inter) = m.at(LinkClass::cluster);
  if (!have_self) m.at(LinkClass::self) = builtin_default().at(LinkClass::self);
  if (m.cluster_split > 0 && !m.clusters.empty())
    r.fail(root, "key 'split' in [layout] and [[cluster]] entries exclude each other");
}

// toml11 parses arrays and inline tables recursively, so a few kilobytes of nested brackets
// overflow the stack, and it takes time quadratic in the parts of a dotted key (50 000 parts:
// 40 s). A machine file needs two levels and two parts; more than kMaxNesting of either is
// refused by this scan, which skips strings and comments, before the parser sees the text.
// Dots are counted per line (a key is on one line), decimal points included: no key of a
// machine file takes a list of numbers.
constexpr int kMaxNesting = 32;

bool nesting_ok(std::string_view text, const std::string& file, std::string& error) {
  int depth = 0, dots = 0;
  std::size_t line = 1;
  auto too_deep = [&] {
    error = file + ":" + std::to_string(line) + ": nested too deeply (more than " +
            std::to_string(kMaxNesting) + " levels of brackets, braces or dotted key parts)";
    return false;
  };
  const std::size_t size = text.size();
  for (std::size_t i = 0; i < size; ++i) {
    const char c = text[i];
    if (c == '\n') {
      ++line;
      dots = 0;
    } else if (c == '.') {
      if (++dots > kMaxNesting) return too_deep();
    } else if (c == '#') {
      while (i + 1 < size && text[i + 1] != '\n') ++i;
    } else if (c == '"' || c == '\'') {
      const std::string_view quote = text.substr(i, 3) == std::string(3, c) ? text.substr(i, 3)
                                                                             : text.substr(i, 1);
      const bool multi = quote.size() == 3;
      std::size_t j = i + quote.size();
      for (; j < size; ++j) {
        if (text[j] == '\n') {
          if (!multi) break;  // an unterminated string: the parser will say so
          ++line;
        } else if (c == '"' && text[j] == '\\') {
          if (j + 1 < size && text[j + 1] == '\n') ++line;
          ++j;
        } else if (text.substr(j, quote.size()) == quote) {
          break;
        }
      }
      // Resume on the closing quote, or before the newline that ended the string.
      i = j >= size ? size : text[j] == '\n' ? j - 1 : j + quote.size() - 1;
    } else if (c == '[' || c == '{') {
      if (++depth > kMaxNesting) return too_deep();
    } else if ((c == ']' || c == '}') && depth > 0) {
      --depth;
    }
  }
  return true;
}

bool glob_match(std::string_view pattern, std::string_view text) {
  std::size_t p = 0, t = 0, star = std::string_view::npos, mark = 0;
  while (t < text.size()) {
    if (p < pattern.size() && (pattern[p] == '?' || pattern[p] == text[t])) {
      ++p;
      ++t;
    } else if (p < pattern.size() && pattern[p] == '*') {
      star = p++;
      mark = t;
    } else if (star != std::string_view::npos) {
      p = star + 1;
      t = ++mark;
    } else {
      return false;
    }
  }
  while (p < pattern.size() && pattern[p] == '*') ++p;
  return p == pattern.size();
}

// A double written so that it reads back to the same value and as a TOML float.
std::string number_text(double x) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.17g", x);
  std::string s = buf;
  if (s.find_first_of(".eEn") == std::string::npos) s += ".0";
  return s;
}

std::string toml_string(std::string_view s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out += c;
  }
  return out + "\"";
}

}  // namespace

Machine default_machine() { return builtin_default(); }

std::span<const std::string_view> preset_names() {
  static const std::vector<std::string_view> names = [] {
    std::vector<std::string_view> out;
    for (const detail::Preset& p : detail::presets()) out.push_back(p.name);
    return out;
  }();
  return names;
}

std::string_view preset_text(std::string_view name) {
  for (const detail::Preset& p : detail::presets())
    if (p.name == name) return p.text;
  return {};
}

bool parse_machine(std::string_view text, std::string_view file, Machine& machine,
                   std::string& error) {
  const std::string file_name(file);
  try {
    if (!nesting_ok(text, file_name, error)) return false;
    std::istringstream in{std::string(text)};
    const toml::value root = toml::parse(in, file_name);
    Machine m;
    m.name = std::string(file);
    if (const auto slash = m.name.find_last_of('/'); slash != std::string::npos)
      m.name.erase(0, slash + 1);
    if (m.name.size() > 5 && m.name.ends_with(".toml")) m.name.resize(m.name.size() - 5);
    read_machine(Reader(file_name), root, m);
    machine = std::move(m);
    return true;
  } catch (const FileError& e) {
    error = e.message;
  } catch (const toml::exception& e) {
    std::string what = e.what();
    what = what.substr(0, what.find('\n'));
    if (what.starts_with("[error] ")) what.erase(0, 8);
    error = file_name + ":" + std::to_string(e.location().line()) + ": syntax error: " + what;
  } catch (const std::exception& e) {
    error = file_name + ": " + e.what();
  }
  return false;
}

bool load_machine(std::string_view name_or_path, Machine& machine, std::string& error) {
  if (name_or_path.empty()) {
    machine = builtin_default();
    return true;
  }
  const bool is_path =
      name_or_path.find('/') != std::string_view::npos || name_or_path.ends_with(".toml");
  if (!is_path) {
    const std::string_view text = preset_text(name_or_path);
    if (text.empty()) {
      std::string list;
      for (std::string_view n : preset_names()) list += (list.empty() ? "" : ", ") + std::string(n);
      error = "unknown machine '" + std::string(name_or_path) + "' (presets: " + list +
              "; a file path must contain '/' or end in .toml)";
      return false;
    }
    return parse_machine(text, "config/machines/" + std::string(name_or_path) + ".toml",
                         machine, error);
  }
  const std::string path(name_or_path);
  std::string text;
  if (!core::read_regular_file(path, core::kMaxTextFileBytes, text, error)) return false;
  return parse_machine(text, path, machine, error);
}

std::string to_toml(const Machine& m) {
  std::ostringstream out;
  out << "# commsched machine file: alpha in seconds, beta in seconds per byte.\n";
  if (!m.name.empty()) out << "name = " << toml_string(m.name) << "\n";
  if (!m.description.empty()) out << "description = " << toml_string(m.description) << "\n";
  for (std::size_t c = 0; c < kLinkClassNames.size(); ++c)
    out << "\n[link." << kLinkClassNames[c] << "]\nalpha = " << number_text(m.link[c].alpha_s)
        << "\nbeta = " << number_text(m.link[c].beta_s_per_byte) << "\n"
        << (m.link[c].overhead_s >= 0.0
                ? "overhead = " + number_text(m.link[c].overhead_s) + "\n"
                : std::string());
  out << "\n[node]\nbeta = " << number_text(m.node_beta_s_per_byte) << "\n";
  out << "\n[inter_cluster]\nsharing = " << number_text(m.inter_sharing) << "\n";
  out << "\n[memory]\ncopy_beta = " << number_text(m.copy_beta_s_per_byte) << "\n";
  if (m.rendezvous_bytes > 0)
    out << "\n[rendezvous]\nmin_bytes = " << m.rendezvous_bytes
        << "\nwait = " << number_text(m.rendezvous_wait) << "\n";
  if (m.native_all_peers || m.native_rank_order)
    out << "\n[native]\nall_peers = " << (m.native_all_peers ? "true" : "false")
        << "\norder = \"" << (m.native_rank_order ? "rank" : "ring") << "\"\n";
  if (m.cluster_split > 0) out << "\n[layout]\nsplit = " << m.cluster_split << "\n";
  for (const SizeFactor& f : m.size_factors)
    out << "\n[[size_factor]]\nmin_bytes = " << f.min_bytes
        << "\nalpha_factor = " << number_text(f.alpha_factor)
        << "\nbeta_factor = " << number_text(f.beta_factor) << "\n";
  for (const ClusterSpec& c : m.clusters) {
    out << "\n[[cluster]]\nname = " << toml_string(c.name) << "\n";
    if (!c.hosts.empty()) {
      out << "hosts = [";
      for (std::size_t i = 0; i < c.hosts.size(); ++i)
        out << (i ? ", " : "") << toml_string(c.hosts[i]);
      out << "]\n";
    } else {
      out << "nodes = [" << c.first_node << ", " << c.last_node << "]\n";
    }
  }
  return out.str();
}

std::vector<int> cluster_of_nodes(const Machine& machine, std::span<const std::string> hosts) {
  const std::size_t nodes = hosts.size();
  std::vector<int> raw(nodes, -1);
  const int named = static_cast<int>(machine.clusters.size());
  for (std::size_t k = 0; k < nodes; ++k) {
    if (machine.cluster_split > 0) {
      raw[k] = static_cast<int>(k * static_cast<std::size_t>(machine.cluster_split) / nodes);
      continue;
    }
    raw[k] = machine.clusters.empty() ? 0 : named;  // unmatched: the extra cluster
    for (int c = 0; c < named; ++c) {
      const ClusterSpec& s = machine.clusters[static_cast<std::size_t>(c)];
      const bool hit =
          s.first_node >= 0
              ? static_cast<int>(k) >= s.first_node && static_cast<int>(k) <= s.last_node
              : std::any_of(s.hosts.begin(), s.hosts.end(),
                            [&](const std::string& p) { return glob_match(p, hosts[k]); });
      if (hit) {
        raw[k] = c;
        break;
      }
    }
  }
  std::map<int, int> renumber;
  for (int c : raw) renumber.emplace(c, 0);
  int next = 0;
  for (auto& [c, id] : renumber) id = next++;
  for (int& c : raw) c = renumber[c];
  return raw;
}

core::Topology make_topology(const Machine& machine, std::vector<int> node_of,
                             std::span<const std::string> node_hosts) {
  core::Topology topo;
  const std::vector<int> cluster = cluster_of_nodes(machine, node_hosts);
  topo.cluster_of.reserve(node_of.size());
  bool several = false;
  for (int node : node_of) {
    const int c = node >= 0 && static_cast<std::size_t>(node) < cluster.size()
                      ? cluster[static_cast<std::size_t>(node)]
                      : 0;
    several |= c != 0;
    topo.cluster_of.push_back(c);
  }
  if (!several) topo.cluster_of.clear();
  topo.node_of = std::move(node_of);
  return topo;
}

}  // namespace commsched::cost
