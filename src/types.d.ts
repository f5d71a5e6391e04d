// SQL migrations are imported as text and embedded in the compiled binary.
declare module "*.sql" {
  const text: string;
  export default text;
}
