#!/usr/bin/env python3
"""Validates commsched JSON reports against docs/report.schema.json.

  validate_report.py SCHEMA REPORT...

Exit 0 when every report is valid, 1 when one is not (each error printed with its path in the
document), 77 (CTest's skip) when python3-jsonschema is not installed.
"""
import json
import sys

try:
    import jsonschema
except ImportError:
    print("validate_report: python3-jsonschema not installed: schema check skipped", file=sys.stderr)
    sys.exit(77)


def main(argv):
    if len(argv) < 3:
        print(__doc__, file=sys.stderr)
        return 2
    with open(argv[1]) as f:
        schema = json.load(f)
    validator_class = jsonschema.validators.validator_for(schema)
    validator_class.check_schema(schema)
    validator = validator_class(schema)
    bad = 0
    for path in argv[2:]:
        with open(path) as f:
            report = json.load(f)
        errors = sorted(validator.iter_errors(report), key=lambda e: list(e.absolute_path))
        for e in errors:
            where = "/".join(str(p) for p in e.absolute_path) or "(top)"
            print(f"validate_report: {path}: {where}: {e.message}", file=sys.stderr)
        if errors:
            bad += 1
        else:
            print(f"validate_report: {path}: valid")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
