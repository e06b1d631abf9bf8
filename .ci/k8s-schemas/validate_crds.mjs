// Validates the KEDA resources among the JSON documents named on the command line (one
// manifest each) against KEDA's own CRD schemas, as published in @kubernetes-models/keda.
// Exits 1 naming the file and the schema error.
import { readFileSync } from "node:fs";
import { ScaledObject } from "@kubernetes-models/keda/keda.sh/v1alpha1/ScaledObject";

const models = { "keda.sh/v1alpha1/ScaledObject": ScaledObject };
let failed = 0;
let checked = 0;
for (const file of process.argv.slice(2)) {
  for (const doc of JSON.parse(readFileSync(file, "utf8"))) {
    const Model = models[`${doc.apiVersion}/${doc.kind}`];
    if (!Model) continue;
    try {
      new Model(doc).validate();
      checked++;
      console.error(`ok ${file}: ${doc.kind}/${doc.metadata?.name}`);
    } catch (e) {
      failed++;
      console.error(`FAIL ${file}: ${doc.kind}/${doc.metadata?.name}: ${e.message}`);
    }
  }
}
if (failed || !checked) {
  if (!checked) console.error("no KEDA resource was checked");
  process.exit(1);
}
