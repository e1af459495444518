// ESLint flat config: type-aware rules for the extension's TypeScript, plain rules for build scripts.
import js from "@eslint/js";
import tseslint from "typescript-eslint";

export default tseslint.config(
  { ignores: ["out/**", "dist/**", "node_modules/**", ".venv/**", "tests/e2e/.tools/**", "tests/e2e/out/**"] },
  js.configs.recommended,
  {
    files: ["**/*.ts"],
    extends: [...tseslint.configs.recommendedTypeChecked],
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      eqeqeq: ["error", "always"],
      curly: ["error", "multi-line"],
      "no-console": "error",
      "@typescript-eslint/no-floating-promises": [
        "error",
        // node:test's describe/it return promises the runner itself awaits.
        { allowForKnownSafeCalls: [{ from: "package", package: "node:test", name: ["describe", "it", "test"] }] },
      ],
      "@typescript-eslint/explicit-module-boundary-types": "error",
      "@typescript-eslint/no-unused-vars": ["error", { argsIgnorePattern: "^_", varsIgnorePattern: "^_" }],
      "@typescript-eslint/consistent-type-imports": "error",
    },
  },
  {
    files: ["**/*.mjs", "**/*.js", "**/*.cjs"],
    languageOptions: {
      globals: {
        process: "readonly", console: "readonly", URL: "readonly", require: "readonly", module: "writable",
        exports: "writable", __dirname: "readonly", setTimeout: "readonly", clearTimeout: "readonly",
        Buffer: "readonly", TextDecoder: "readonly",
      },
    },
  },
  {
    // The extension-host suite runs under mocha's tdd interface.
    files: ["tests/e2e/suite/**/*.js"],
    languageOptions: { globals: { suite: "readonly", suiteSetup: "readonly", suiteTeardown: "readonly", test: "readonly" } },
  },
);
