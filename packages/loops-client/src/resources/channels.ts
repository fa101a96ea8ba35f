import type { CallOptions } from "../call-options.ts";
import { listSchema } from "../schemas/common.ts";
import { type Channel, ChannelSchema } from "../schemas/location.ts";
import { ScopedResource } from "./scoped-resource.ts";

const ChannelListSchema = listSchema(ChannelSchema);

/** GET /channels: the channel catalog with each channel's capabilities. */
export class ChannelsResource extends ScopedResource {
  async list(options: CallOptions = {}): Promise<Channel[]> {
    const body = await this.send({
      method: "GET",
      route: "/channels",
      path: "/channels",
      schema: ChannelListSchema,
      signal: options.signal,
    });
    return body.data;
  }
}
