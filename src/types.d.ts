// SQL migrations are imported as text and embedded in the compiled binary.
declare module "*.sql" {
  const text: string;
  export default text;
}

// Scalar's standalone API reference, embedded as a file (a path Bun.file reads, inside the binary too).
declare module "@scalar/api-reference/browser/standalone.js" {
  const path: string;
  export default path;
}
