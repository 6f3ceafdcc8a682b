// A vitest reporter that writes the tests that passed only on a retry (flaky) to the file named
// by SVC_FLAKY_OUT, one "<project> <file> > <test>" per entry. scripts/test.mjs reads it: the JSON
// reporter counts a flaky test as passed and says nothing else.
import { writeFileSync } from "node:fs";
import { relative } from "node:path";

export default class FlakyReporter {
  flaky = [];

  onTestCaseResult(testCase) {
    if (testCase.result().state === "passed" && testCase.diagnostic()?.flaky) {
      this.flaky.push(
        `${testCase.project.name} ${relative(process.cwd(), testCase.module.moduleId)} > ${testCase.fullName}`,
      );
    }
  }

  onTestRunEnd() {
    if (process.env.SVC_FLAKY_OUT) writeFileSync(process.env.SVC_FLAKY_OUT, JSON.stringify(this.flaky));
  }
}
