"""`capidx verify`: check every source against its live page; record `verifiedDate` only when earned.

- `sources`: which sources the catalog cites, and what each claims;
- `fetch`: bounded, polite, address-checked HTTP (the only module that touches the network);
- `content`: a page's visible text and anchors, and the searches made in them;
- `verdicts`: evidence -> verdict and a reason a person can act on (pure);
- `rewrite`: `--write` edits of the data files, byte for byte outside the changed values;
- `report`: text, json, github and markdown output;
- `run`: the command end to end.

Never called by `build` or `validate`: it reaches the network, they must not.
"""
