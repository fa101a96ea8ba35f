// YAML reading for the deployment tests, with the `yaml` package (eemeli/yaml).
import { readFileSync } from "node:fs";
import path from "node:path";
import * as yaml from "yaml";

export const REPO_ROOT = path.resolve(import.meta.dirname, "../../..");

/** Thrown when a file is not valid YAML; names the file and the parser's first complaint. */
export class YamlSyntaxError extends Error {
  readonly code = "yaml_syntax";
  constructor(file: string, detail: string) {
    super(`${file}: not valid YAML: ${detail}`);
    this.name = "YamlSyntaxError";
  }
}

/**
 * Every document of a YAML text as plain JS, with `<<` merge keys applied as Docker Compose does
 * and duplicate keys rejected (Compose and kubectl both refuse them).
 */
export function parseYamlDocuments(source: string, file = "<text>"): unknown[] {
  const documents = yaml.parseAllDocuments(source, { merge: true, uniqueKeys: true });
  const values: unknown[] = [];
  for (const document of documents) {
    const first = document.errors[0];
    if (first) throw new YamlSyntaxError(file, first.message);
    const value = document.toJS();
    if (value !== null && value !== undefined) values.push(value);
  }
  return values;
}

/** Reads a repository file (path relative to the root) and parses every YAML document in it. */
export function readYamlDocuments(relativePath: string): unknown[] {
  return parseYamlDocuments(readFileSync(path.join(REPO_ROOT, relativePath), "utf8"), relativePath);
}
