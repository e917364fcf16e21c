import { describe, expect, it } from 'vitest';
import { sandboxEnv } from './env.js';

const layout = { root: '/s', workspace: '/s/workspace', home: '/s/home', tmp: '/s/tmp' };

describe('sandboxEnv', () => {
  it('copies only PATH, LANG and LC_ALL from the host and never a key', () => {
    const env = sandboxEnv(
      layout,
      { PATH: '/usr/bin:/bin', LANG: 'en_US.UTF-8', ANTHROPIC_API_KEY: 'sk-ant-secret', OPENAI_API_KEY: 'sk-secret', AWS_SECRET_ACCESS_KEY: 'x', HOME: '/root', SSH_AUTH_SOCK: '/run/ssh' },
      'http://127.0.0.1:3128',
    );
    expect(env.PATH).toBe('/usr/bin:/bin');
    expect(env.LANG).toBe('en_US.UTF-8');
    expect(JSON.stringify(env)).not.toMatch(/secret|\/root|ssh/i);
    expect(Object.keys(env).sort()).toEqual(
      ['ALL_PROXY', 'HOME', 'HTTPS_PROXY', 'HTTP_PROXY', 'LANG', 'NO_COLOR', 'NO_PROXY', 'NO_UPDATE_NOTIFIER', 'PATH', 'PWD', 'TERM', 'TMPDIR', 'all_proxy', 'http_proxy', 'https_proxy', 'no_proxy', 'npm_config_update_notifier'].sort(),
    );
  });

  it('puts HOME and TMPDIR beside the workspace, and the proxy in both cases', () => {
    const env = sandboxEnv(layout, {}, 'http://127.0.0.1:3128', { QS_PORT: '21000' });
    expect(env).toMatchObject({ HOME: '/s/home', TMPDIR: '/s/tmp', PWD: '/s/workspace', TERM: 'dumb', NO_COLOR: '1', QS_PORT: '21000' });
    expect(env.HOME.startsWith(layout.workspace)).toBe(false);
    expect(env.https_proxy).toBe('http://127.0.0.1:3128');
    expect(env.HTTPS_PROXY).toBe('http://127.0.0.1:3128');
    expect(env.no_proxy).toBe('localhost,127.0.0.1,::1');
    expect(env.PATH).toContain('/usr/bin');
  });

  it('drops the PATH entries that would name a folder the sandbox writes: empty, relative, or inside the layout', () => {
    // `PATH=$EXTRA:$PATH` with EXTRA unset starts PATH with an empty entry, the current folder: the
    // workspace, where a planted `grep` then answered for the check's own qs_expect_output.
    const env = sandboxEnv(layout, { PATH: ':node_modules/.bin:/usr/local/bin:.:/s/workspace/bin:/s/home/.local/bin:/usr/bin::/bin:' }, 'http://127.0.0.1:3128');
    expect(env.PATH).toBe('/usr/local/bin:/usr/bin:/bin');
    expect(sandboxEnv(layout, { PATH: '::.' }, 'http://127.0.0.1:3128').PATH).toBe('/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin');
  });
});
