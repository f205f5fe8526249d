"""The operator tools' inputs (`diff`, `hashes`): captured prompts and Chat Completions bodies, their framing and their field-by-field comparison."""
