// The type of /vendor/marked.js, which tools/build-web-assets.mjs copies from the marked package's ES module build.
export * from 'marked';
