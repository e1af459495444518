// Notebook renderer entry (browser) for application/vnd.ascend-lens.profile+json.
import type { ActivationFunction } from "vscode-notebook-renderer";
import { cellFileOf, renderOutputHtml } from "./rendererView";

export const activate: ActivationFunction = () => ({
  renderOutputItem(item, element) {
    let value: unknown;
    try {
      value = item.json();
    } catch {
      value = undefined;
    }
    element.innerHTML = renderOutputHtml(value, cellFileOf(item.metadata, item.mime));
  },
});
