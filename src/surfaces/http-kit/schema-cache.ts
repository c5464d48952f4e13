/**
 * What a compiler makes of a route schema, made once per process and schema object rather than once per app: route
 * schemas are module constants, so every app a process builds (the test suite builds hundreds; a server, one) asks for
 * the same objects, and compiling them was most of building an app. Used for the validators
 * (validation.ts) and the response serializers (serialization.ts).
 */
export function oncePerSchema<In extends { schema: unknown }, Out>(compile: (input: In) => Out): {
  (input: In): Out;
  /** For tests: how many schemas were compiled (a process's second app adds none). */
  readonly compilations: () => number;
} {
  const compiled = new WeakMap<object, Out>();
  let compilations = 0;
  return Object.assign((input: In): Out => {
    const schema = input.schema as object;
    let out = compiled.get(schema);
    if (out === undefined) {
      out = compile(input);
      compilations++;
      compiled.set(schema, out);
    }
    return out;
  }, { compilations: () => compilations });
}
