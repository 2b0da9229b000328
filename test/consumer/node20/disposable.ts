// `await using` with nothing but the language's own types (the test compiles this with `types: []`).
await using resource = { async [Symbol.asyncDispose]() {} };
export {};
