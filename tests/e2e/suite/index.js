// Extension-host entry (extensionTestsPath): runs the mocha suite inside the real VS Code
// extension host of code-server and prints the CI-readable "N passed, N failed" line.
const path = require("path");
const Mocha = require("mocha");

exports.run = function run() {
  // E2E_GREP (from tests/e2e/run's environment) runs a subset while working on one test.
  const mocha = new Mocha({ ui: "tdd", timeout: 90000, color: false, grep: process.env.E2E_GREP || undefined });
  mocha.addFile(path.join(__dirname, "extension.test.js"));
  return new Promise((resolve, reject) => {
    const runner = mocha.run((failures) => {
      console.log(`${runner.stats.passes} passed, ${runner.stats.failures} failed`);
      if (failures) reject(new Error(`${failures} tests failed`));
      else resolve();
    });
  });
};
