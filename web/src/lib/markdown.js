// @ts-check
// Markdown as safe HTML: raw HTML is off (markdown-it escapes it) and markdown-it's own
// link check refuses javascript:, vbscript:, file: and data: (but images) URLs.
import MarkdownIt from "markdown-it";

const md = new MarkdownIt("commonmark", { html: false, linkify: false })
  .enable("table").enable("strikethrough");

const open = md.renderer.rules.link_open || ((tokens, i, options, env, self) =>
  self.renderToken(tokens, i, options));
md.renderer.rules.link_open = (tokens, i, options, env, self) => {
  tokens[i].attrSet("rel", "noopener noreferrer");
  return open(tokens, i, options, env, self);
};

export function markdown(text) {
  return md.render(text || "");
}
