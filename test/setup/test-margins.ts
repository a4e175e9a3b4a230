// With PI_CGC_WAIT_RECORD set, each test case is recorded against its timeout too (test/helpers/wait-record.ts),
// so that scripts/wait-margins.mjs shows the cases whose timeout sits close to how long they take.
import { relative } from "node:path";
import { beforeEach } from "vitest";
import { recordTest } from "../helpers/wait-record.ts";

if (process.env.PI_CGC_WAIT_RECORD) {
  beforeEach((context) => {
    const startedAt = Date.now();
    const file = relative(process.cwd(), context.task.file.filepath);
    context.onTestFinished(({ task }) => {
      recordTest(`${file} > ${task.name}`, task.timeout, Date.now() - startedAt, task.result?.state === "pass");
    });
  });
}
