/**
 * Jest's sequencer for a run of scripts/test-lanes.cjs: the files in the order the lane gives
 * (JEST_FILE_ORDER, a JSON list of paths), not jest's own (slowest first). A Swarm lane runs the
 * files that need no persona image first, while that image is still being built.
 */
const Default = require('@jest/test-sequencer').default;

class FileOrder extends Default {
  sort(tests) {
    const order = JSON.parse(process.env.JEST_FILE_ORDER || '[]');
    const rank = (test) => {
      const i = order.indexOf(test.path);
      return i < 0 ? order.length : i;
    };
    return [...tests].sort((a, b) => rank(a) - rank(b));
  }
}

module.exports = FileOrder;
