// Extension-host entry (extensionTestsPath): runs the mocha suite inside the real VS Code
// extension host of code-server and prints the CI-readable "N passed, N failed" line.
const path = require("path");
const Mocha = require("mocha");

exports.run = function run() {
  const mocha = new Mocha({ ui: "tdd", timeout: 90000, color: false });
  mocha.addFile(path.join(__dirname, "extension.test.js"));
  return new Promise((resolve, reject) => {
    mocha.run((failures) => {
      console.log(`${mocha.suite.total() - failures} passed, ${failures} failed`);
      if (failures) reject(new Error(`${failures} tests failed`));
      else resolve();
    });
  });
};
