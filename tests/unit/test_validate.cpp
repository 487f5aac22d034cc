// core::validate must catch every way a plan can break (DESIGN.md "Plans are data").
#include <gtest/gtest.h>

#include <string>

#include "core/comm_matrix.hpp"
#include "core/plan.hpp"

namespace commsched::core {
namespace {

// 0 -> 1: 100 bytes, 0 -> 2: 50 bytes, 2 -> 0: 10 bytes, 1 -> 1: 5 bytes (self).
CommMatrix small_matrix() {
  CommMatrix m(3);
  m.set_row(0, {{1, 100}, {2, 50}});
  m.set_row(1, {{1, 5}});
  m.set_row(2, {{0, 10}});
  return m;
}

Transfer direct(Rank from, Rank to, Bytes offset, Bytes length) {
  return {from, to, {Piece{from, to, offset, length}}};
}

Plan good_plan() {
  Plan p;
  p.n = 3;
  p.phases.push_back({{direct(0, 1, 0, 100), direct(2, 0, 0, 10), direct(1, 1, 0, 5)}});
  p.phases.push_back({{direct(0, 2, 0, 50)}});
  return p;
}

void expect_error(const Plan& p, const CommMatrix& m, const std::string& fragment) {
  const Validation v = validate(p, m);
  EXPECT_FALSE(v.ok);
  EXPECT_NE(v.error.find(fragment), std::string::npos) << "error was: " << v.error;
}

TEST(Validate, AcceptsAGoodPlan) {
  const Validation v = validate(good_plan(), small_matrix());
  EXPECT_TRUE(v.ok) << v.error;
  EXPECT_TRUE(v.error.empty());
}

TEST(Validate, AcceptsSplitPiecesAndAnEmptyMatrix) {
  Plan p = good_plan();
  p.phases[0].transfers[0] = direct(0, 1, 0, 60);
  p.phases[1].transfers.push_back(direct(0, 1, 60, 40));
  EXPECT_TRUE(validate(p, small_matrix()).ok);
  Plan empty;
  empty.n = 4;
  EXPECT_TRUE(validate(empty, CommMatrix(4)).ok);
}

TEST(Validate, WrongSize) {
  Plan p = good_plan();
  p.n = 4;
  expect_error(p, small_matrix(), "plan is for 4 ranks");
}

TEST(Validate, MissingBytes) {
  Plan p = good_plan();
  p.phases[0].transfers[0] = direct(0, 1, 0, 99);
  expect_error(p, small_matrix(), "bytes missing");
  Plan hole = good_plan();
  hole.phases[0].transfers[0] = direct(0, 1, 0, 40);
  hole.phases[1].transfers.push_back(direct(0, 1, 50, 50));
  expect_error(hole, small_matrix(), "bytes missing");
}

TEST(Validate, MessageNeverDelivered) {
  Plan p = good_plan();
  p.phases.pop_back();
  expect_error(p, small_matrix(), "0->2 never delivered");
}

TEST(Validate, DuplicateBytes) {
  Plan p = good_plan();
  p.phases[1].transfers.push_back(direct(0, 1, 90, 10));  // again, in another phase
  expect_error(p, small_matrix(), "delivered twice");
}

TEST(Validate, BytesBeyondOrOutsideTheMatrix) {
  Plan beyond = good_plan();
  beyond.phases[0].transfers[0] = direct(0, 1, 0, 101);
  expect_error(beyond, small_matrix(), "piece beyond message");
  Plan stranger = good_plan();
  stranger.phases[1].transfers.push_back(direct(1, 2, 0, 1));  // 1 -> 2 is not in the matrix
  expect_error(stranger, small_matrix(), "beyond message");
  Plan empty_piece = good_plan();
  empty_piece.phases[1].transfers[0].pieces.push_back(Piece{0, 2, 50, 0});
  expect_error(empty_piece, small_matrix(), "empty piece");
  Plan no_pieces = good_plan();
  no_pieces.phases[1].transfers.push_back({1, 0, {}});
  expect_error(no_pieces, small_matrix(), "no pieces");
  Plan out_of_range = good_plan();
  out_of_range.phases[1].transfers.push_back(direct(0, 3, 0, 1));
  expect_error(out_of_range, small_matrix(), "rank out of range");
}

TEST(Validate, TwoTransfersSamePairInOnePhase) {
  Plan p = good_plan();
  p.phases[0].transfers[0] = direct(0, 1, 0, 60);
  p.phases[0].transfers.push_back(direct(0, 1, 60, 40));
  expect_error(p, small_matrix(), "two transfers between the same pair");
}

TEST(Validate, ForwardingBeforeReceipt) {
  // 0 -> 2 routed through 1: legal when 1 forwards in a later phase, not in the same one.
  Plan p = good_plan();
  p.phases[1].transfers = {{0, 1, {Piece{0, 2, 0, 50}}}};
  p.phases.push_back({{{1, 2, {Piece{0, 2, 0, 50}}}}});
  EXPECT_TRUE(validate(p, small_matrix()).ok) << validate(p, small_matrix()).error;

  Plan same_phase = good_plan();
  same_phase.phases[1].transfers = {{0, 1, {Piece{0, 2, 0, 50}}}, {1, 2, {Piece{0, 2, 0, 50}}}};
  expect_error(same_phase, small_matrix(), "has not received");

  Plan too_much = good_plan();  // forwards more than it got
  too_much.phases[1].transfers = {{0, 1, {Piece{0, 2, 0, 20}}}};
  too_much.phases.push_back({{{1, 2, {Piece{0, 2, 0, 50}}}}});
  expect_error(too_much, small_matrix(), "has not received");
}

TEST(Validate, PermutationViolation) {
  Plan p;
  p.n = 3;
  p.permutation = true;
  p.phases.push_back({{direct(0, 1, 0, 100), direct(0, 2, 0, 50)}});  // rank 0 sends twice
  p.phases.push_back({{direct(2, 0, 0, 10), direct(1, 1, 0, 5)}});
  expect_error(p, small_matrix(), "more than one message");
  p.permutation = false;
  EXPECT_TRUE(validate(p, small_matrix()).ok);

  Plan twice_in;  // rank 1 receives twice
  twice_in.n = 3;
  twice_in.permutation = true;
  twice_in.phases.push_back({{direct(0, 1, 0, 100), direct(1, 1, 0, 5)}});
  twice_in.phases.push_back({{direct(0, 2, 0, 50), direct(2, 0, 0, 10)}});
  expect_error(twice_in, small_matrix(), "rank 1");
}

}  // namespace
}  // namespace commsched::core
