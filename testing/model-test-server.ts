import * as Http from "node:http"
import type { AddressInfo } from "node:net"

/**
 * Test support: a loopback HTTP server in the Hugging Face layout
 * (`/<repo>/resolve/<revision>/<name>`) that honours `Range: bytes=N-` and can cut the
 * connection in the middle of a file the first time it is requested. Nothing in the product
 * imports this file.
 */
export interface ServedFile {
  readonly name: string
  readonly bytes: Buffer
}

export interface RequestLog {
  readonly path: string
  readonly range: string | undefined
  readonly status: number
}

export interface ModelServer {
  readonly endpoint: string
  readonly requests: ReadonlyArray<RequestLog>
  readonly close: () => Promise<void>
}

export interface ModelServerOptions {
  readonly repo: string
  readonly revision: string
  readonly files: ReadonlyArray<ServedFile>
  /** Files whose first request sends about half of the body and then destroys the socket. */
  readonly cutFirst?: ReadonlyArray<string>
  /** How many requests of each `cutFirst` file are cut that way (default 1). */
  readonly cutTimes?: number
  /** Answer `resolve` URLs with a 302 to `/cdn/<name>` first, as Hugging Face does. */
  readonly redirect?: boolean
}

export const startModelServer = (options: ModelServerOptions): Promise<ModelServer> =>
  new Promise((resolve) => {
    const requests: Array<RequestLog> = []
    const toCut = new Map((options.cutFirst ?? []).map((name) => [name, options.cutTimes ?? 1]))
    const prefix = `/${options.repo}/resolve/${options.revision}/`
    const server = Http.createServer((req, res) => {
      const url = req.url ?? ""
      const log = (status: number) => requests.push({ path: url, range: req.headers.range, status })
      let name: string | undefined
      if (url.startsWith(prefix)) {
        if (options.redirect === true) {
          log(302)
          res.writeHead(302, { location: `/cdn/${url.slice(prefix.length)}` }).end()
          return
        }
        name = decodeURIComponent(url.slice(prefix.length))
      } else if (options.redirect === true && url.startsWith("/cdn/")) {
        name = decodeURIComponent(url.slice("/cdn/".length))
      }
      const file = options.files.find((f) => f.name === name)
      if (file === undefined) {
        log(404)
        res.writeHead(404).end("not found")
        return
      }
      const total = file.bytes.length
      const match = /^bytes=(\d+)-$/.exec(req.headers.range ?? "")
      const start = match?.[1] === undefined ? 0 : Number(match[1])
      if (start >= total && match !== null) {
        log(416)
        res.writeHead(416, { "content-range": `bytes */${total}` }).end()
        return
      }
      const body = file.bytes.subarray(start)
      const status = match === null ? 200 : 206
      log(status)
      res.writeHead(status, {
        "content-length": body.length,
        "content-type": "application/octet-stream",
        ...(status === 206 ? { "content-range": `bytes ${start}-${total - 1}/${total}` } : {})
      })
      const cuts = toCut.get(file.name) ?? 0
      if (cuts > 0) {
        toCut.set(file.name, cuts - 1)
        res.write(body.subarray(0, Math.floor(body.length / 2)), () => {
          setTimeout(() => res.socket?.destroy(), 20)
        })
        return
      }
      res.end(body)
    })
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as AddressInfo
      resolve({
        endpoint: `http://127.0.0.1:${port}`,
        requests,
        close: () =>
          new Promise((done) => {
            server.closeAllConnections()
            server.close(() => done())
          })
      })
    })
  })
