import { describe, expect, test } from "bun:test";
import { HpackDecoder, HpackError, encodeHeaders, huffmanCodes, huffmanDecode } from "./hpack";

describe("Huffman code (RFC 7541 Appendix B)", () => {
  test("the canonical code built from the lengths is complete and matches known codes", () => {
    const codes = huffmanCodes();
    expect(codes.length).toBe(257);
    expect(codes.reduce((s, [, len]) => s + 2 ** -len, 0)).toBe(1); // Kraft equality: a complete prefix code
    expect(codes[48]).toEqual([0x0, 5]); // '0'
    expect(codes[0]).toEqual([0x1ff8, 13]);
    expect(codes[128]).toEqual([0xfffe6, 20]);
    expect(codes[256]).toEqual([0x3fffffff, 30]); // EOS
  });
  test("decodes the RFC examples and rejects bad padding", () => {
    expect(huffmanDecode(Buffer.from("f1e3c2e5f23a6ba0ab90f4ff", "hex"))).toBe("www.example.com");
    expect(huffmanDecode(Buffer.from("a8eb10649cbf", "hex"))).toBe("no-cache");
    expect(() => huffmanDecode(Buffer.from("f1e3c2e5f23a6ba0ab90f400", "hex"))).toThrow(HpackError);
  });
});

describe("HpackDecoder", () => {
  test("RFC 7541 C.4: three requests sharing one dynamic table", () => {
    const d = new HpackDecoder();
    expect(d.decode(Buffer.from("828684418cf1e3c2e5f23a6ba0ab90f4ff", "hex"))).toEqual([
      [":method", "GET"], [":scheme", "http"], [":path", "/"], [":authority", "www.example.com"],
    ]);
    expect(d.decode(Buffer.from("828684be5886a8eb10649cbf", "hex"))).toEqual([
      [":method", "GET"], [":scheme", "http"], [":path", "/"], [":authority", "www.example.com"], ["cache-control", "no-cache"],
    ]);
    expect(d.decode(Buffer.from("828785bf408825a849e95ba97d7f8925a849e95bb8e8b4bf", "hex"))).toEqual([
      [":method", "GET"], [":scheme", "https"], [":path", "/index.html"], [":authority", "www.example.com"], ["custom-key", "custom-value"],
    ]);
  });
  test("round-trips what the encoder writes, and refuses out-of-range indexes", () => {
    const list: [string, string][] = [[":status", "429"], ["retry-after", "3"], ["content-type", "application/json"], ["x-long", "v".repeat(300)]];
    expect(new HpackDecoder().decode(encodeHeaders(list))).toEqual(list);
    expect(() => new HpackDecoder().decode(Buffer.from([0xff, 0x7f]))).toThrow(HpackError);
  });
});
