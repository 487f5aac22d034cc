"""Checks an OTF2 archive written by commsched-analyze --otf2 against the traces it came from
(read through commsched-analyze --csv). Used by trace_roundtrip.sh --otf2.

  otf2_check.py MATRIX_CSV CALLS_CSV OTF2_PRINT_OUTPUT NP

  - one region entered and left per recorded call;
  - one collective event per native MPI_Alltoallv (the job's one communicator has a learned
    pattern, so the archive defines it);
  - per rank, substituted calls x that rank's messages to other ranks MPI_SEND events, their
    lengths adding up to the same calls x bytes; as many MPI_RECV events and bytes in all.
A direct strategy moves every message once, so its schedule's messages are the matrix's.
"""
import collections, csv, re, sys
matrix_csv, calls_csv, printed, np = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
row_msgs, row_bytes = collections.Counter(), collections.Counter()
for r in csv.DictReader(open(matrix_csv)):
    if r["src"] != r["dst"]:
        row_msgs[int(r["src"])] += 1
        row_bytes[int(r["src"])] += int(r["bytes"])
calls = 0
native = 0
want_msgs, want_bytes = collections.Counter(), collections.Counter()
for r in csv.DictReader(open(calls_csv)):
    n, rank = int(r["calls"]), int(r["rank"])
    calls += n
    if r["kind"] != "alltoallv":
        continue
    if r["optimised"] != "1":
        native += n
    elif r["pattern"]:
        want_msgs[rank] += n * row_msgs[rank]
        want_bytes[rank] += n * row_bytes[rank]
kinds = collections.Counter()
sends, send_bytes = collections.Counter(), collections.Counter()
recv_bytes = 0
for line in open(printed):
    f = line.split()
    if len(f) < 3 or not f[1].isdigit():
        continue
    kinds[f[0]] += 1
    length = re.search(r"Length: (\d+)", line)
    if f[0] == "MPI_SEND":
        sends[int(f[1])] += 1
        send_bytes[int(f[1])] += int(length.group(1))
    elif f[0] == "MPI_RECV":
        recv_bytes += int(length.group(1))
errors = []
def expect(what, got, want):
    print(f"otf2_check: {what}: {got} (expected {want})")
    if got != want:
        errors.append(what)
expect("regions entered", kinds["ENTER"], calls)
expect("regions left", kinds["LEAVE"], calls)
expect("collective ends (native calls)", kinds["MPI_COLLECTIVE_END"], native)
for rank in range(np):
    expect(f"rank {rank} sends", sends[rank], want_msgs[rank])
    expect(f"rank {rank} bytes sent", send_bytes[rank], want_bytes[rank])
expect("receives", kinds["MPI_RECV"], sum(want_msgs.values()))
expect("bytes received", recv_bytes, sum(want_bytes.values()))
expect("some messages", sum(want_msgs.values()) > 0, True)
print("otf2_check: " + ("FAIL: " + ", ".join(errors) if errors else "all ok"))
sys.exit(1 if errors else 0)
