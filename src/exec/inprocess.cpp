#include "exec/inprocess.hpp"

#include <cstring>
#include <deque>
#include <tuple>

namespace commsched::exec {

std::uint8_t InProcessWorld::expected_byte(Rank src, Rank dst, Bytes index, std::uint64_t salt) {
  std::uint64_t x = salt ^ (static_cast<std::uint64_t>(src) << 40) ^
                    (static_cast<std::uint64_t>(dst) << 20) ^ index;
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdULL;
  x ^= x >> 33;
  return static_cast<std::uint8_t>(x);
}

InProcessWorld::InProcessWorld(const core::CommMatrix& m, std::uint64_t salt)
    : m_(m), salt_(salt), mem_(static_cast<std::size_t>(m.size())) {
  for (Rank i = 0; i < m.size(); ++i)
    for (const core::Entry& e : m.row(i)) {
      auto& out = mem_[static_cast<std::size_t>(i)].send[e.peer];
      out.resize(e.bytes);
      for (Bytes b = 0; b < e.bytes; ++b) out[b] = expected_byte(i, e.peer, b, salt);
      // Receive buffers start as a canary that no expected byte sequence matches for long.
      mem_[static_cast<std::size_t>(e.peer)].recv[i].assign(e.bytes, 0);
    }
}

std::uint8_t* InProcessWorld::locate(Rank rank, const Segment& s, std::string& error) {
  RankMemory& rm = mem_[static_cast<std::size_t>(rank)];
  std::vector<std::uint8_t>* buf = nullptr;
  if (s.area == Area::staging) {
    buf = &rm.staging;
  } else {
    auto& table = s.area == Area::send_msg ? rm.send : rm.recv;
    auto it = table.find(s.peer);
    if (it != table.end()) buf = &it->second;
  }
  if (!buf || s.offset + s.length > buf->size()) {
    error = "rank " + std::to_string(rank) + ": segment outside its buffer";
    return nullptr;
  }
  if (s.whole && (s.offset != 0 || s.length != buf->size())) {
    error = "rank " + std::to_string(rank) + ": segment marked whole is not the whole message";
    return nullptr;
  }
  return buf->data() + s.offset;
}

bool InProcessWorld::run(std::span<const RankProgram> programs, std::string& error) {
  const Rank n = m_.size();
  for (Rank r = 0; r < n; ++r)
    mem_[static_cast<std::size_t>(r)].staging.assign(programs[static_cast<std::size_t>(r)].staging_bytes,
                                                     0);
  std::size_t steps = 0;
  for (const RankProgram& p : programs) steps = std::max(steps, p.steps.size());
  // Mailboxes keyed by (from, to, step), FIFO like MPI's matching on one tag.
  std::map<std::tuple<Rank, Rank, std::size_t>, std::deque<std::vector<std::uint8_t>>> mail;
  for (std::size_t k = 0; k < steps; ++k) {
    // All sends and local copies of step k first (an MPI send may complete before its receive
    // is posted), then all receives.
    for (Rank r = 0; r < n; ++r) {
      const RankProgram& p = programs[static_cast<std::size_t>(r)];
      if (k >= p.steps.size()) continue;
      const Step& s = p.steps[k];
      for (const LocalCopy& c : s.copies) {
        std::vector<std::uint8_t> bytes;
        for (const Segment& seg : c.from) {
          const std::uint8_t* src = locate(r, seg, error);
          if (!src) return false;
          bytes.insert(bytes.end(), src, src + seg.length);
        }
        Bytes pos = 0;
        for (const Segment& seg : c.to) {
          std::uint8_t* dst = locate(r, seg, error);
          if (!dst) return false;
          if (pos + seg.length > bytes.size()) {
            error = "local copy sizes differ";
            return false;
          }
          std::memcpy(dst, bytes.data() + pos, seg.length);
          pos += seg.length;
        }
      }
      for (const Op& op : s.sends) {
        std::vector<std::uint8_t> bytes;
        for (const Segment& seg : op.segments) {
          const std::uint8_t* src = locate(r, seg, error);
          if (!src) return false;
          bytes.insert(bytes.end(), src, src + seg.length);
        }
        if (bytes.size() != op.bytes) {
          error = "send size differs from its segments";
          return false;
        }
        mail[{r, op.peer, k}].push_back(std::move(bytes));
      }
    }
    for (Rank r = 0; r < n; ++r) {
      const RankProgram& p = programs[static_cast<std::size_t>(r)];
      if (k >= p.steps.size()) continue;
      for (const Op& op : p.steps[k].recvs) {
        auto it = mail.find({op.peer, r, k});
        if (it == mail.end() || it->second.empty()) {
          error = "rank " + std::to_string(r) + " step " + std::to_string(k) +
                  ": nothing sent by " + std::to_string(op.peer);
          return false;
        }
        std::vector<std::uint8_t> bytes = std::move(it->second.front());
        it->second.pop_front();
        if (it->second.empty()) mail.erase(it);
        if (bytes.size() != op.bytes) {
          error = "rank " + std::to_string(r) + ": received size differs";
          return false;
        }
        Bytes pos = 0;
        for (const Segment& seg : op.segments) {
          std::uint8_t* dst = locate(r, seg, error);
          if (!dst) return false;
          std::memcpy(dst, bytes.data() + pos, seg.length);
          pos += seg.length;
        }
      }
    }
  }
  if (!mail.empty()) {
    const auto& [key, q] = *mail.begin();
    error = "message " + std::to_string(std::get<0>(key)) + "->" + std::to_string(std::get<1>(key)) +
            " in step " + std::to_string(std::get<2>(key)) + " was never received";
    return false;
  }
  return true;
}

bool InProcessWorld::delivered_exactly(std::string& error) const {
  for (Rank j = 0; j < m_.size(); ++j)
    for (const auto& [src, bytes] : mem_[static_cast<std::size_t>(j)].recv)
      for (Bytes b = 0; b < bytes.size(); ++b)
        if (bytes[b] != expected_byte(src, j, b, salt_)) {
          error = "rank " + std::to_string(j) + ": byte " + std::to_string(b) + " from " +
                  std::to_string(src) + " differs";
          return false;
        }
  return true;
}

}  // namespace commsched::exec
