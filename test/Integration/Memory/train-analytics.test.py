"""Checks the report.json of train-analytics.test (not a test by itself)."""
import json
import sys

report = json.load(open(sys.argv[1]))
ok = True
for c in report["configurations"]:
    if c["kind"] in ("full", "ga"):
        print(c["name"], len(c["loss"]), "static == measured",
              c["static_peak_bytes"] == c["measured_peak_bytes"])
if report["torch"]:
    kinds = [c["kind"] for c in report["configurations"]]
    ok = kinds.count("torch-loop") == 2 and kinds.count("compile_train_step") == 2
    for c in report["configurations"]:
        if c["kind"] == "torch-loop":
            ok &= len(c["loss"]) == 4 and c["measured_peak_bytes"] > 0
        if c["kind"] == "compile_train_step":
            ratio = c["measured_peak_bytes"] / c["static_peak_bytes"]
            ok &= len(c["loss"]) == 4 and 0.9 <= ratio <= 1.1
            if not 0.9 <= ratio <= 1.1:
                print(f"{c['name']}: measured / static = {ratio:.3f}")
    ok &= report["max_relative_loss_difference_torch"] <= 1e-5
    print("torch configurations", "OK" if ok else "FAIL")
else:
    print("torch configurations OK")
    print("(torch not importable: PyTorch configurations skipped)")
